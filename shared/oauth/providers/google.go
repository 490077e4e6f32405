package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
)

// googleUserinfo is the OpenID Connect userinfo document.
type googleUserinfo struct {
	Sub           string   `json:"sub"`
	Name          string   `json:"name"`
	GivenName     string   `json:"given_name"`
	Email         string   `json:"email"`
	EmailVerified flexBool `json:"email_verified"`
	Picture       string   `json:"picture"`
}

func fetchGoogle(ctx context.Context, p *provider, tok *oauth2.Token) (Profile, error) {
	sub, err := p.idTokenSubject(tok)
	if err != nil {
		return Profile{}, err
	}
	var u googleUserinfo
	if err := p.getJSON(ctx, tok, p.ep.ProfileURL, &u); err != nil {
		return Profile{}, err
	}
	if u.Sub != sub {
		return Profile{}, fmt.Errorf("%w: google: the userinfo subject differs from the ID token's", ErrProfile)
	}
	name := u.Name
	if name == "" {
		name = u.GivenName
	}
	profile := Profile{ProviderUserID: u.Sub, Username: name, AvatarURL: ptr(u.Picture)}
	if u.EmailVerified {
		profile.Email = ptr(u.Email)
	}
	return profile, nil
}

// idTokenLeeway is the clock skew allowed when checking the ID token's expiry.
const idTokenLeeway = time.Minute

// googleIDClaims are the ID token claims that are checked.
type googleIDClaims struct {
	jwt.RegisteredClaims
	AuthorizedParty string `json:"azp"`
}

// idTokenSubject checks the ID token that came with the access token and
// returns its subject. A token response without one is refused. The ID
// token comes straight from the token endpoint over TLS, so its issuer is
// established by the connection and the signature is not checked (OpenID
// Connect Core §3.1.3.7); what is checked is that it was issued by the
// configured issuer (iss) for this client (aud, and azp when present or when
// there are several audiences), that it has not expired (exp), and that it
// names a subject.
func (p *provider) idTokenSubject(tok *oauth2.Token) (string, error) {
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return "", fmt.Errorf("%w: google: the token response carries no ID token", ErrExchange)
	}
	var claims googleIDClaims
	if _, _, err := jwt.NewParser().ParseUnverified(raw, &claims); err != nil {
		return "", fmt.Errorf("%w: google: malformed ID token: %w", ErrExchange, err)
	}
	// Google documents both forms of its issuer: https://accounts.google.com and
	// accounts.google.com.
	if claims.Issuer != p.ep.Issuer && claims.Issuer != bareIssuer(p.ep.Issuer) {
		return "", fmt.Errorf("%w: google: ID token issuer %q, want %q", ErrExchange, clip(claims.Issuer), p.ep.Issuer)
	}
	v := jwt.NewValidator(jwt.WithAudience(p.cfg.ClientID), jwt.WithExpirationRequired(), jwt.WithLeeway(idTokenLeeway))
	if err := v.Validate(claims); err != nil {
		return "", fmt.Errorf("%w: google: ID token: %w", ErrExchange, err)
	}
	if azp := claims.AuthorizedParty; azp != "" && azp != p.cfg.ClientID || azp == "" && len(claims.Audience) > 1 {
		return "", fmt.Errorf("%w: google: the ID token's authorized party %q is not this client", ErrExchange, clip(azp))
	}
	if claims.Subject == "" {
		return "", fmt.Errorf("%w: google: the ID token has no subject", ErrExchange)
	}
	return claims.Subject, nil
}

// bareIssuer is the issuer without its scheme, the second form Google documents.
func bareIssuer(issuer string) string {
	if rest, ok := strings.CutPrefix(issuer, "https://"); ok {
		return rest
	}
	return strings.TrimPrefix(issuer, "http://")
}

// flexBool accepts a JSON boolean or the strings "true" and "false", as
// OpenID providers differ on email_verified.
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*b = flexBool(v)
	case string:
		*b = flexBool(strings.EqualFold(v, "true"))
	case nil:
		*b = false
	default:
		return fmt.Errorf("email_verified: unexpected JSON %s", clip(string(data)))
	}
	return nil
}
