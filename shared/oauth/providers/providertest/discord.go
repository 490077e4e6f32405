package providertest

import (
	"net/http"
	"slices"
	"strings"
)

// discordRoutes serves Discord's paths: /oauth2/authorize,
// /api/oauth2/token and /api/users/@me.
func (s *Server) discordRoutes() (http.Handler, endpointPaths) {
	paths := endpointPaths{auth: "/oauth2/authorize", token: "/api/oauth2/token", profile: "/api/users/@me"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+paths.auth, s.handleAuthorize)
	mux.HandleFunc("POST "+paths.token, s.discordToken)
	mux.HandleFunc("GET "+paths.profile, s.discordMe)
	return mux, paths
}

// handleAuthorize is the authorization endpoint of discord and github.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	ar, ok := s.parseAuthorize(w, r)
	if !ok {
		return
	}
	u, ok := s.consent(w, r, ar)
	if !ok {
		return
	}
	redirectTo(w, r, ar.redirect, map[string][]string{"code": {s.issueCode(u, ar)}, "state": {ar.state}})
}

// discordToken answers like https://discord.com/api/oauth2/token: JSON, 400
// {"error":"invalid_grant",...} for a bad code, 401 invalid_client for bad
// client credentials.
func (s *Server) discordToken(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, code, desc string) {
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	if err := parseTokenForm(w, r); err != nil {
		fail(http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if !s.clientAuth(r) {
		fail(http.StatusUnauthorized, "invalid_client", "Invalid client credentials")
		return
	}
	if s.take(&s.failToken) {
		fail(http.StatusBadRequest, "invalid_grant", `Invalid "code" in request.`)
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "authorization_code" {
		fail(http.StatusBadRequest, "unsupported_grant_type", `Unsupported grant type "`+gt+`"`)
		return
	}
	g, ok := s.redeem(r.PostForm.Get("code"))
	if !ok {
		fail(http.StatusBadRequest, "invalid_grant", `Invalid "code" in request.`)
		return
	}
	if r.PostForm.Get("redirect_uri") != g.redirectURI {
		fail(http.StatusBadRequest, "invalid_grant", `Invalid "redirect_uri" in request.`)
		return
	}
	if !verifierMatches(r.PostForm.Get("code_verifier"), g.challenge) {
		fail(http.StatusBadRequest, "invalid_grant", `Invalid "code_verifier" in request.`)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  s.issueToken(g),
		"token_type":    "Bearer",
		"expires_in":    int(tokenTTL.Seconds()),
		"refresh_token": randomToken(),
		"scope":         strings.Join(g.scopes, " "),
	})
}

// discordMe answers like https://discord.com/api/users/@me: the user object,
// with email and verified only under the email scope.
func (s *Server) discordMe(w http.ResponseWriter, r *http.Request) {
	if s.take(&s.failProfile) {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": "500: Internal Server Error", "code": 0})
		return
	}
	sess, ok := s.session(bearer(r, false))
	if !ok || !slices.Contains(sess.scopes, "identify") {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "401: Unauthorized", "code": 0})
		return
	}
	u := sess.user
	disc := u.Discriminator
	if disc == "" {
		disc = "0"
	}
	body := map[string]any{
		"id":            u.ID,
		"username":      u.Login,
		"discriminator": disc,
		"global_name":   null(u.Name),
		"avatar":        null(u.Avatar),
		"banner":        nil,
		"accent_color":  nil,
		"mfa_enabled":   false,
		"locale":        "en-US",
		"flags":         0,
		"public_flags":  0,
		"premium_type":  0,
	}
	if slices.Contains(sess.scopes, "email") {
		body["email"] = null(u.Email)
		body["verified"] = u.EmailVerified
	}
	writeJSON(w, http.StatusOK, body)
}
