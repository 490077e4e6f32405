// Package audit records administrative writes and account-security events: who acted,
// on what, and what changed, as one structured log record through the request's
// logger (JSON with the request id in the functions). Records carry ids, names and
// the changed fields, never cookies, tokens or image data. Refusals (every 403) are
// recorded by httpapi.Error, with the same message and level (see Refused there).
//
// A record made in a request carries the caller's address (client_ip,
// httpapi.ClientIP).
//
// Every text value of a record is bounded (MaxValue characters, the rest replaced by
// a count) and escaped (control and invisible formatting characters, such as the
// bidirectional overrides, written as \u{XXXX}), so that a record stays one readable
// line whatever a user typed.
package audit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/httpapi"
)

// Message is the msg of every audit record.
const Message = httpapi.AuditMessage

// MaxValue is the most characters of a text value a record keeps.
const MaxValue = 200

// Record logs that the authenticated user of ctx did action (e.g. "user.edit") to the
// target of kind (e.g. "user") and id (0 for a new one), with changes: attributes
// naming what changed (roles granted and taken away, permissions added and removed,
// names before and after...). It runs after the write committed. Records have their
// own level, httpapi.LevelAudit, which LOG_LEVEL never filters out.
func Record(ctx context.Context, action, kind string, id int64, changes ...slog.Attr) {
	var actor int64
	if p, ok := auth.FromContext(ctx); ok {
		actor = p.UserID
	}
	RecordBy(ctx, actor, action, kind, id, changes...)
}

// RecordBy is Record for an actor that is not the request's principal: a sign-up's
// new user, or 0 for the operator's command line.
func RecordBy(ctx context.Context, actor int64, action, kind string, id int64, changes ...slog.Attr) {
	attrs := []slog.Attr{
		slog.Int64("actor_id", actor),
		slog.String("action", action),
		slog.Group("target", slog.String("kind", kind), slog.Int64("id", id)),
	}
	if len(changes) > 0 {
		args := make([]any, len(changes))
		for i, c := range changes {
			args[i] = clean(c)
		}
		attrs = append(attrs, slog.Group("changes", args...))
	}
	if addr := httpapi.ClientAddress(ctx); addr != "" {
		attrs = append(attrs, slog.String("client_ip", addr))
	}
	httpapi.Logger(ctx).LogAttrs(ctx, httpapi.LevelAudit, Message, attrs...)
}

// Change is the attribute of a field an edit changed: {"before": ..., "after": ...}.
func Change(name string, before, after any) slog.Attr {
	return slog.Group(name, slog.Any("before", before), slog.Any("after", after))
}

// IDs is a list of ids for a record: never null, so "none" reads as [].
func IDs(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

// clean bounds and escapes the text values of a, in groups too.
func clean(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Value(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, c := range g {
			out[i] = clean(c)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case string:
			return slog.String(a.Key, Value(x))
		case *string:
			if x == nil {
				return slog.Any(a.Key, nil)
			}
			return slog.String(a.Key, Value(*x))
		case []string:
			out := make([]string, len(x))
			for i, s := range x {
				out[i] = Value(s)
			}
			return slog.Any(a.Key, out)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// Value is s as a record keeps it: at most MaxValue characters (the rest counted, as
// "…(+N)"), invalid UTF-8 as U+FFFD, and control and formatting characters (Unicode
// categories Cc and Cf, which include the bidirectional overrides and zero-width
// characters) as \u{XXXX}, the backslash itself as \\.
func Value(s string) string {
	var b strings.Builder
	n := 0
	for i, r := range s {
		if n == MaxValue {
			fmt.Fprintf(&b, "…(+%d)", utf8.RuneCountInString(s[i:]))
			break
		}
		n++
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u{%04X}`, r)
		default:
			b.WriteRune(r) // an invalid byte is written as U+FFFD
		}
	}
	return b.String()
}

// CommandLogger returns a context whose records go to w as JSON lines, with the level
// named AUDIT as the functions name it: the operator's commands (grant-role, token)
// record their writes through it, in the same shape as the API's records.
func CommandLogger(ctx context.Context, w io.Writer) context.Context {
	l := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.LevelKey && a.Value.Any() == httpapi.LevelAudit {
			a.Value = slog.StringValue("AUDIT")
		}
		return a
	}}))
	return httpapi.WithLogger(ctx, l)
}
