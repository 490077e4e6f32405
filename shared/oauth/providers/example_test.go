package providers_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/shared/oauth/providers"
)

// A login flow against the discord stand-in: the start handler stores the
// state and verifier and redirects to AuthCodeURL; the callback handler
// checks the state, then CallbackError, then Exchange.
func Example() {
	srv, stop, err := providertest.Start(providertest.Discord, "client-id", "client-secret")
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	srv.QueueUser(providertest.User{ID: "80351110224678912", Login: "nelly", Name: "Nelly",
		Email: "nelly@example.com", EmailVerified: true, Avatar: "a_1269e74af4df7417b13759eae50c83dc"})

	env := srv.Env()
	configured, skipped := providers.FromEnv(func(k string) string { return env[k] }, nil)
	fmt.Println("skipped:", skipped)
	discord := configured["discord"]

	// GET /auth/oauth/discord: keep state and verifier server-side (10 minutes, one use).
	ctx := context.Background()
	const redirect = "http://localhost:3000/auth/oauth/discord/callback"
	verifier, challenge := providers.PKCE()
	consent := discord.AuthCodeURL("state-token", challenge, redirect)

	// The browser consents; the provider sends it back to the callback.
	back, err := providertest.Authorize(ctx, consent)
	if err != nil {
		log.Fatal(err)
	}

	// GET /auth/oauth/discord/callback: after validating state.
	q := back.Query()
	if err := providers.CallbackError(q); err != nil {
		log.Fatal(err) // errors.Is(err, providers.ErrAccessDenied) → oauth_error=access_denied
	}
	profile, err := discord.Exchange(ctx, q.Get("code"), verifier, redirect)
	if err != nil {
		// errors.Is(err, providers.ErrExchange) or ErrProfile → oauth_error=exchange_failed
		log.Fatal(err)
	}
	fmt.Println(profile.ProviderUserID, profile.Username, *profile.Email)
	fmt.Println(*profile.AvatarURL)
	// Output:
	// skipped: [google github]
	// 80351110224678912 Nelly nelly@example.com
	// https://cdn.discordapp.com/avatars/80351110224678912/a_1269e74af4df7417b13759eae50c83dc.gif
}
