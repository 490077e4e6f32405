package dynamo_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/dynamo"
)

func TestStateStore(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx := context.Background()
	inTenMinutes := time.Now().Add(10 * time.Minute).Truncate(time.Second)

	tests := []struct {
		name  string
		state dynamo.State
	}{
		{"login", dynamo.State{Provider: "google", Flow: dynamo.FlowLogin, Verifier: "v-login", ExpiresAt: inTenMinutes}},
		{"link", dynamo.State{Provider: "github", Flow: dynamo.FlowLink, UserID: "42", Verifier: "v-link", ExpiresAt: inTenMinutes}},
		{"no verifier", dynamo.State{Provider: "discord", Flow: dynamo.FlowLogin, ExpiresAt: inTenMinutes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.state
			want.Token = dynamo.NewToken()
			if err := store.Put(ctx, want); err != nil {
				t.Fatalf("Put: %v", err)
			}
			got, err := store.Consume(ctx, want.Token)
			if err != nil {
				t.Fatalf("Consume: %v", err)
			}
			if !got.ExpiresAt.Equal(want.ExpiresAt) {
				t.Errorf("ExpiresAt = %v, want %v", got.ExpiresAt, want.ExpiresAt)
			}
			got.ExpiresAt = want.ExpiresAt
			if got != want {
				t.Errorf("Consume = %+v, want %+v", got, want)
			}
			if _, err := store.Consume(ctx, want.Token); !errors.Is(err, dynamo.ErrInvalidState) {
				t.Errorf("replayed Consume: err = %v, want ErrInvalidState", err)
			}
		})
	}
}

func TestStateStoreRejects(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx := context.Background()

	expired := dynamo.State{Token: dynamo.NewToken(), Provider: "google", Flow: dynamo.FlowLogin, ExpiresAt: time.Now().Add(-time.Second)}
	if err := store.Put(ctx, expired); err != nil {
		t.Fatalf("Put expired: %v", err)
	}
	tests := []struct {
		name  string
		token string
	}{
		{"expired", expired.Token},
		{"unknown", dynamo.NewToken()},
		{"empty", ""},
		{"too long", strings.Repeat("a", 129)},
		{"not base64url", "abc/def+ghi="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := store.Consume(ctx, tt.token); !errors.Is(err, dynamo.ErrInvalidState) {
				t.Errorf("Consume: err = %v, want ErrInvalidState", err)
			}
		})
	}
}

func TestStateStorePutInvalid(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx := context.Background()
	valid := dynamo.State{Token: dynamo.NewToken(), Provider: "google", Flow: dynamo.FlowLogin, ExpiresAt: time.Now().Add(time.Minute)}

	tests := []struct {
		name   string
		change func(*dynamo.State)
	}{
		{"no token", func(s *dynamo.State) { s.Token = "" }},
		{"malformed token", func(s *dynamo.State) { s.Token = "a b" }},
		{"no provider", func(s *dynamo.State) { s.Provider = "" }},
		{"unknown flow", func(s *dynamo.State) { s.Flow = "signup" }},
		{"link without user", func(s *dynamo.State) { s.Flow = dynamo.FlowLink }},
		{"no expiry", func(s *dynamo.State) { s.ExpiresAt = time.Time{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := valid
			tt.change(&st)
			if err := store.Put(ctx, st); err == nil {
				t.Errorf("Put(%+v) succeeded, want an error", st)
			}
		})
	}

	t.Run("duplicate token", func(t *testing.T) {
		if err := store.Put(ctx, valid); err != nil {
			t.Fatalf("first Put: %v", err)
		}
		if err := store.Put(ctx, valid); err == nil {
			t.Error("second Put of the same token succeeded, want an error")
		}
	})
}

// Many callbacks racing with one state: exactly one consumes it.
func TestStateStoreConsumeOnce(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx := context.Background()
	st := dynamo.State{Token: dynamo.NewToken(), Provider: "google", Flow: dynamo.FlowLogin, ExpiresAt: time.Now().Add(time.Minute)}
	if err := store.Put(ctx, st); err != nil {
		t.Fatalf("Put: %v", err)
	}
	const callers = 20
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		consumed int
	)
	for range callers {
		wg.Go(func() {
			_, err := store.Consume(ctx, st.Token)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				consumed++
			case !errors.Is(err, dynamo.ErrInvalidState):
				t.Errorf("Consume: %v", err)
			}
		})
	}
	wg.Wait()
	if consumed != 1 {
		t.Errorf("%d of %d concurrent Consume calls succeeded, want 1", consumed, callers)
	}
}

func TestStateStoreInfrastructureError(t *testing.T) {
	client, _, _ := tables(t)
	store := dynamo.NewStateStore(client, "no-such-table")
	_, err := store.Consume(context.Background(), dynamo.NewToken())
	if err == nil || errors.Is(err, dynamo.ErrInvalidState) {
		t.Errorf("Consume on a missing table: err = %v, want an infrastructure error", err)
	}
}

func TestNewToken(t *testing.T) {
	seen := make(map[string]bool)
	for range 100 {
		tok := dynamo.NewToken()
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil || len(raw) != 32 {
			t.Fatalf("NewToken() = %q: %d bytes, %v; want 32 bytes of base64url", tok, len(raw), err)
		}
		if seen[tok] {
			t.Fatalf("NewToken() repeated %q", tok)
		}
		seen[tok] = true
	}
}
