// Package audit records administrative writes: who acted, on what, and what changed,
// as one structured log record through the request's logger (JSON with the request id
// in the functions). Records carry ids, names and the changed fields, never cookies,
// tokens or image data.
package audit

import (
	"context"
	"log/slog"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Message is the msg of every audit record.
const Message = "audit"

// Record logs that the authenticated user of ctx did action (e.g. "user.edit") to the
// target of kind (e.g. "user") and id (0 for a new one), with changes: attributes
// naming what changed (roles granted and taken away, permissions added and removed,
// new names...). It runs after the write committed. Records have their own level,
// httpapi.LevelAudit, which LOG_LEVEL never filters out.
func Record(ctx context.Context, action, kind string, id int64, changes ...slog.Attr) {
	var actor int64
	if p, ok := auth.FromContext(ctx); ok {
		actor = p.UserID
	}
	attrs := []slog.Attr{
		slog.Int64("actor_id", actor),
		slog.String("action", action),
		slog.Group("target", slog.String("kind", kind), slog.Int64("id", id)),
	}
	if len(changes) > 0 {
		args := make([]any, len(changes))
		for i, c := range changes {
			args[i] = c
		}
		attrs = append(attrs, slog.Group("changes", args...))
	}
	httpapi.Logger(ctx).LogAttrs(ctx, httpapi.LevelAudit, Message, attrs...)
}
