package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
)

// AuditMessage is the msg of every audit record (package audit's Message).
const AuditMessage = "audit"

type actorKey struct{}

// WithActor returns a context naming the authenticated user of the request, for the
// record of a refusal (auth sets it as soon as it knows the user).
func WithActor(ctx context.Context, userID int64) context.Context {
	return context.WithValue(ctx, actorKey{}, userID)
}

// Refused records a refusal that is not a 403 (an authentication refused for a reason
// worth attributing) as refused records a 403.
func Refused(r *http.Request, why string) { refused(r, why) }

// refused records a 403 as an audit record (level AUDIT, action "refused"): the actor
// (0 when not known yet, as for a cross-site write refused before authentication),
// the route's pattern, the target's path id (0 when the route has none), the caller's
// address (ClientIP) and why, so
// that every refused attempt can be attributed. Error calls it for every 403, so the
// permission checks of the routes and the access rules of the stores are both on the
// record. why is the refusal's cause, written by our code with ids only.
func refused(r *http.Request, why string) {
	actor, _ := r.Context().Value(actorKey{}).(int64)
	target, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	route := r.Pattern
	if route == "" {
		// Refused before routing (the origin guard): the request's path, escaped
		// (ASCII, no control or formatting characters) and bounded.
		route = r.Method + " " + r.URL.EscapedPath()
		if len(route) > 200 {
			route = route[:200]
		}
	}
	attrs := []slog.Attr{
		slog.Int64("actor_id", actor),
		slog.String("action", "refused"),
		slog.String("route", route),
		slog.Group("target", slog.Int64("id", target)),
	}
	if why != "" {
		attrs = append(attrs, slog.String("reason", why))
	}
	attrs = append(attrs, slog.String("client_ip", ClientIP(r)))
	Logger(r.Context()).LogAttrs(r.Context(), LevelAudit, AuditMessage, attrs...)
}

// WithLogger returns a context whose Logger is l: for code that records outside a
// request, as the operator's commands record their writes (package audit).
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}
