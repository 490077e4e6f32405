package providertest

import (
	"net/http"
	"slices"
	"strings"
)

// discordAPIVersions are the API versions Discord lists as available
// (discord.com/developers/docs/reference, API Versioning). An unversioned path
// goes to Discord's default version, which it marks deprecated, so the stand-in
// answers it, like any other version, 404 as Discord does for an unknown route.
var discordAPIVersions = []string{"v9", "v10"}

// discordRoutes serves Discord's paths: /oauth2/authorize, the token endpoint
// at /api/oauth2/token (the address Discord's OAuth2 documentation gives) and
// /api/v{9,10}/oauth2/token, and /api/v{9,10}/users/@me.
func (s *Server) discordRoutes() (http.Handler, endpointPaths) {
	paths := endpointPaths{auth: "/oauth2/authorize", token: "/api/oauth2/token", profile: "/api/v10/users/@me"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+paths.auth, s.handleAuthorize)
	mux.HandleFunc("POST "+paths.token, s.discordToken)
	for _, v := range discordAPIVersions {
		mux.HandleFunc("POST /api/"+v+"/oauth2/token", s.discordToken)
		mux.HandleFunc("GET /api/"+v+"/users/@me", s.discordMe)
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "404: Not Found", "code": 0})
	})
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
	if kind := s.takeRateLimit(); kind != 0 {
		s.answerRateLimit(w, kind)
		return
	}
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
	body := map[string]any{
		"id":           u.ID,
		"username":     u.Login,
		"global_name":  null(u.Name),
		"avatar":       null(u.Avatar),
		"banner":       nil,
		"accent_color": nil,
		"mfa_enabled":  false,
		"locale":       "en-US",
		"flags":        0,
		"public_flags": 0,
		"premium_type": 0,
	}
	// Users on the new usernames have discriminator "0"; Discord's user object
	// may leave it out, which an empty Discriminator stands for.
	if u.Discriminator != "" {
		body["discriminator"] = u.Discriminator
	}
	if slices.Contains(sess.scopes, "email") {
		body["email"] = null(u.Email)
		body["verified"] = u.EmailVerified
	}
	writeJSON(w, http.StatusOK, body)
}
