package postgres_test

import (
	"math/rand/v2"
	"testing"

	"github.com/mediacatalog/service/shared/postgres"
)

// TestNameKey: names equal up to case, compatibility forms and confusable characters
// share a key; others do not. The ASCII fast path gives the general path's key for
// every ASCII name (all pairs of characters, and random names).
func TestNameKey(t *testing.T) {
	same := [][2]string{
		{"admin", "Admin"}, {"admin", "ADMIN"}, {"admin", "аdmin"}, {"admin", "ΑDMIN"},
		{"admin", "ａｄｍｉｎ"}, {"admin", "adrnin"}, {"hal", "ha1"}, {"hal", "HA1"}, {"bob-0", "bob-O"},
	}
	for _, p := range same {
		if postgres.NameKey(p[0]) != postgres.NameKey(p[1]) {
			t.Errorf("%q and %q have different keys %q, %q", p[0], p[1], postgres.NameKey(p[0]), postgres.NameKey(p[1]))
		}
	}
	differ := [][2]string{{"admin", "admins"}, {"jane-doe", "jane-doe-2"}, {"émile", "emile-x"}, {"ana", "anna"}}
	for _, p := range differ {
		if postgres.NameKey(p[0]) == postgres.NameKey(p[1]) {
			t.Errorf("%q and %q share the key %q", p[0], p[1], postgres.NameKey(p[0]))
		}
	}
	check := func(s string) {
		if got, want := postgres.NameKey(s), postgres.UnicodeNameKey(s); got != want {
			t.Errorf("NameKey(%q) = %q, the general path %q", s, got, want)
		}
	}
	for a := range 128 {
		for b := range 128 {
			check(string([]byte{byte(a), byte(b)}))
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		s := make([]byte, 1+r.IntN(20))
		for i := range s {
			s[i] = byte(r.IntN(128))
		}
		check(string(s))
	}
}

// TestPrefixEnd: the sign-up reads the keys in [prefix, PrefixEnd(prefix)), which in
// byte order holds exactly the keys that start with prefix.
func TestPrefixEnd(t *testing.T) {
	for _, tt := range []struct{ prefix, end string }{
		{"admin-", "admin."},
		{"ａ-", "ａ."},
		{"x\xff", "y"},
	} {
		end := postgres.PrefixEnd(tt.prefix)
		if end != tt.end {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tt.prefix, end, tt.end)
		}
		for _, k := range []string{tt.prefix, tt.prefix + "2", tt.prefix + "\U0010FFFF"} {
			if !(k >= tt.prefix && k < end) {
				t.Errorf("%q starts with %q but is outside [%q, %q)", k, tt.prefix, tt.prefix, end)
			}
		}
	}
}
