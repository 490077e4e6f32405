package dynamo_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mediacatalog/service/shared/catalog"
	"github.com/mediacatalog/service/shared/dynamo"
)

func TestStateStore(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx := context.Background()
	inTenMinutes := time.Now().Add(10 * time.Minute).Truncate(time.Second)

	tests := []struct {
		name  string
		state catalog.OAuthState
	}{
		{"login", catalog.OAuthState{Provider: "google", Flow: catalog.FlowLogin, Verifier: "v-login", ExpiresAt: inTenMinutes}},
		{"link", catalog.OAuthState{Provider: "github", Flow: catalog.FlowLink, UserID: "42", Verifier: "v-link", ExpiresAt: inTenMinutes}},
		{"no verifier", catalog.OAuthState{Provider: "discord", Flow: catalog.FlowLogin, ExpiresAt: inTenMinutes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.state
			want.Token = newToken()
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
			if _, err := store.Consume(ctx, want.Token); !errors.Is(err, catalog.ErrInvalidState) {
				t.Errorf("replayed Consume: err = %v, want ErrInvalidState", err)
			}
		})
	}
}

func TestStateStoreRejects(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx := context.Background()

	expired := catalog.OAuthState{Token: newToken(), Provider: "google", Flow: catalog.FlowLogin, ExpiresAt: time.Now().Add(-time.Second)}
	if err := store.Put(ctx, expired); err != nil {
		t.Fatalf("Put expired: %v", err)
	}
	tests := []struct {
		name  string
		token string
	}{
		{"expired", expired.Token},
		{"unknown", newToken()},
		{"empty", ""},
		{"too long", strings.Repeat("a", 129)},
		{"not base64url", "abc/def+ghi="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := store.Consume(ctx, tt.token); !errors.Is(err, catalog.ErrInvalidState) {
				t.Errorf("Consume: err = %v, want ErrInvalidState", err)
			}
		})
	}
}

func TestStateStorePutInvalid(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx := context.Background()
	valid := catalog.OAuthState{Token: newToken(), Provider: "google", Flow: catalog.FlowLogin, ExpiresAt: time.Now().Add(time.Minute)}

	tests := []struct {
		name   string
		change func(*catalog.OAuthState)
	}{
		{"no token", func(s *catalog.OAuthState) { s.Token = "" }},
		{"malformed token", func(s *catalog.OAuthState) { s.Token = "a b" }},
		{"no provider", func(s *catalog.OAuthState) { s.Provider = "" }},
		{"unknown flow", func(s *catalog.OAuthState) { s.Flow = "signup" }},
		{"link without user", func(s *catalog.OAuthState) { s.Flow = catalog.FlowLink }},
		{"no expiry", func(s *catalog.OAuthState) { s.ExpiresAt = time.Time{} }},
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
	st := catalog.OAuthState{Token: newToken(), Provider: "google", Flow: catalog.FlowLogin, ExpiresAt: time.Now().Add(time.Minute)}
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
			case !errors.Is(err, catalog.ErrInvalidState):
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
	_, err := store.Consume(context.Background(), newToken())
	if err == nil || errors.Is(err, catalog.ErrInvalidState) {
		t.Errorf("Consume on a missing table: err = %v, want an infrastructure error", err)
	}
}

// The request's context reaches the SDK's call: a cancelled one ends it at once, as an
// infrastructure error rather than an invalid state.
func TestStateStoreContext(t *testing.T) {
	client, stateTable, _ := tables(t)
	store := dynamo.NewStateStore(client, stateTable)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := store.Consume(ctx, newToken()); !errors.Is(err, context.Canceled) {
		t.Errorf("Consume with a cancelled context: %v, want context.Canceled", err)
	}
}
