package providertest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

const githubDocs = "https://docs.github.com/rest"

// githubRoutes serves GitHub's paths: /login/oauth/authorize and
// /login/oauth/access_token (github.com), /user and /user/emails
// (api.github.com), all on one host.
func (s *Server) githubRoutes() (http.Handler, endpointPaths) {
	paths := endpointPaths{auth: "/login/oauth/authorize", token: "/login/oauth/access_token", profile: "/user", emails: "/user/emails"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+paths.auth, s.handleAuthorize)
	mux.HandleFunc("POST "+paths.token, s.githubToken)
	mux.HandleFunc("GET "+paths.profile, s.githubUser)
	mux.HandleFunc("GET "+paths.emails, s.githubEmails)
	return mux, paths
}

// githubToken answers like https://github.com/login/oauth/access_token: JSON
// when the request accepts it, form-encoded otherwise; failures are answered
// with status 200 and an "error" field (bad_verification_code, ...), as
// GitHub does.
func (s *Server) githubToken(w http.ResponseWriter, r *http.Request) {
	asJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	answer := func(v map[string]string) {
		if asJSON {
			writeJSON(w, http.StatusOK, v)
			return
		}
		form := url.Values{}
		for k, val := range v {
			form.Set(k, val)
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(form.Encode()))
	}
	fail := func(code, desc string) {
		answer(map[string]string{"error": code, "error_description": desc,
			"error_uri": "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"})
	}
	if err := parseTokenForm(w, r); err != nil {
		fail("invalid_request", err.Error())
		return
	}
	if !s.clientAuth(r) {
		fail("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
		return
	}
	if s.take(&s.failToken) {
		fail("bad_verification_code", "The code passed is incorrect or expired.")
		return
	}
	g, ok := s.redeem(r.PostForm.Get("code"))
	if !ok {
		fail("bad_verification_code", "The code passed is incorrect or expired.")
		return
	}
	if ru := r.PostForm.Get("redirect_uri"); ru != "" && ru != g.redirectURI {
		fail("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.")
		return
	}
	if !verifierMatches(r.PostForm.Get("code_verifier"), g.challenge) {
		fail("bad_verification_code", "The code_verifier does not match the code_challenge.")
		return
	}
	answer(map[string]string{
		"access_token": "gho_" + s.issueToken(g),
		"token_type":   "bearer",
		"scope":        strings.Join(g.scopes, ","),
	})
}

// githubSession authenticates an API request the way api.github.com does:
// a User-Agent is required, then a valid token. It reports false when it
// answered.
func (s *Server) githubSession(w http.ResponseWriter, r *http.Request) (session, bool) {
	if r.Header.Get("User-Agent") == "" {
		writeJSON(w, http.StatusForbidden, map[string]string{
			"message": "Request forbidden by administrative rules. Please make sure your request has a User-Agent header.",
		})
		return session{}, false
	}
	if kind := s.takeRateLimit(); kind != 0 {
		s.answerRateLimit(w, kind)
		return session{}, false
	}
	if s.take(&s.failProfile) {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"message": "Server Error", "documentation_url": githubDocs})
		return session{}, false
	}
	sess, ok := s.session(strings.TrimPrefix(bearer(r, true), "gho_"))
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials", "documentation_url": githubDocs, "status": "401"})
		return session{}, false
	}
	return sess, true
}

// githubUser answers like https://api.github.com/user.
func (s *Server) githubUser(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.githubSession(w, r)
	if !ok {
		return
	}
	u := sess.user
	// The id is a JSON number at GitHub; an ID that is not one is sent as a
	// string, which a client must reject.
	var id any = u.ID
	if _, err := strconv.ParseInt(u.ID, 10, 64); err == nil {
		id = json.Number(u.ID)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"login":        u.Login,
		"id":           id,
		"node_id":      "U_" + u.ID,
		"avatar_url":   u.Avatar,
		"gravatar_id":  "",
		"url":          "https://api.github.com/users/" + u.Login,
		"html_url":     "https://github.com/" + u.Login,
		"type":         "User",
		"site_admin":   false,
		"name":         null(u.Name),
		"company":      nil,
		"blog":         "",
		"location":     nil,
		"email":        null(githubPublicEmail(u)),
		"hireable":     nil,
		"bio":          nil,
		"public_repos": 0,
		"followers":    0,
		"following":    0,
		"created_at":   "2011-01-25T18:44:36Z",
		"updated_at":   "2024-01-01T00:00:00Z",
	})
}

// githubEmails answers like https://api.github.com/user/emails, which needs
// the user:email (or user) scope and answers 404 without it.
func (s *Server) githubEmails(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.githubSession(w, r)
	if !ok {
		return
	}
	if !slices.Contains(sess.scopes, "user:email") && !slices.Contains(sess.scopes, "user") {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": githubDocs, "status": "404"})
		return
	}
	if s.take(&s.failEmails) {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"message": "Server Error", "documentation_url": githubDocs})
		return
	}
	emails := githubEmails(sess.user)
	list := make([]map[string]any, 0, len(emails))
	for _, e := range emails {
		list = append(list, map[string]any{
			"email": e.Email, "primary": e.Primary, "verified": e.Verified, "visibility": null(e.Visibility),
		})
	}
	writeJSON(w, http.StatusOK, list)
}

// githubEmails is the user's /user/emails list (see User.Emails).
func githubEmails(u User) []Email {
	if u.Emails != nil || u.Email == "" {
		return u.Emails
	}
	visibility := "private"
	if u.EmailVerified {
		visibility = "public"
	}
	return []Email{{Email: u.Email, Primary: true, Verified: u.EmailVerified, Visibility: visibility}}
}

// githubPublicEmail is /user's "email": the address the user made public, which
// GitHub allows only for a verified one; "" (null) when none is.
func githubPublicEmail(u User) string {
	for _, e := range githubEmails(u) {
		if e.Visibility == "public" && e.Verified {
			return e.Email
		}
	}
	return ""
}
