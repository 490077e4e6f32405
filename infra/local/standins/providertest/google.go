package providertest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// signingKey is the RSA key of every google stand-in in the process:
// generating one per server would slow tests down for nothing.
var signingKey = sync.OnceValues(func() (*rsa.PrivateKey, error) {
	return rsa.GenerateKey(rand.Reader, 2048)
})

// startGoogle runs mockoidc as Google. mockoidc is a real OpenID Connect
// provider, with these gaps that the middleware here closes:
//   - PKCE is optional there (no code_challenge, no check) and "plain" is
//     allowed; here S256 is required.
//   - its token endpoint reads client credentials from the form only and
//     never checks redirect_uri; here Basic authentication works too and
//     redirect_uri must match the authorization request, as at Google, with
//     Google's 400 answers.
//   - its userinfo document has no sub, name, picture or email_verified;
//     queued users are served in Google's userinfo shape (googleUser).
//   - it has no denial, no failure injection, and its session store is not
//     safe for concurrent requests; requests are serialized here.
func (s *Server) startGoogle() error {
	key, err := signingKey()
	if err != nil {
		return err
	}
	m, err := mockoidc.NewServer(key)
	if err != nil {
		return err
	}
	m.ClientID, m.ClientSecret = s.ClientID, s.ClientSecret
	m.CodeChallengeMethodsSupported = []string{"S256"}
	if err := m.AddMiddleware(s.googleMiddleware); err != nil {
		return err
	}
	addr := s.opts.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if err := m.Start(ln, nil); err != nil {
		ln.Close()
		return err
	}
	s.oidc = m
	s.URL = m.Addr()
	s.AuthURL = m.AuthorizationEndpoint()
	s.TokenURL = m.TokenEndpoint()
	s.ProfileURL = m.UserinfoEndpoint()
	s.Issuer = m.Issuer()
	s.stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := m.Server.Shutdown(ctx); err != nil {
			m.Server.Close()
		}
	}
	return nil
}

func (s *Server) googleMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.oidcMu.Lock()
		defer s.oidcMu.Unlock()
		switch r.URL.Path {
		case mockoidc.AuthorizationEndpoint:
			s.googleAuthorize(w, r, next)
		case mockoidc.TokenEndpoint:
			s.googleToken(w, r, next)
		case mockoidc.UserinfoEndpoint:
			if kind := s.takeRateLimit(); kind != 0 {
				s.answerRateLimit(w, kind)
				return
			}
			if s.take(&s.failProfile) {
				writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal_failure", "error_description": "Backend Error"})
				return
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func (s *Server) googleAuthorize(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	ar, ok := s.parseAuthorize(w, r)
	if !ok {
		return
	}
	u, ok := s.consent(w, r, ar)
	if !ok {
		return
	}
	s.oidc.QueueUser(googleUser{u: u, s: s})
	next.ServeHTTP(w, r)
	// Remember what the code was issued for, to check it at the token
	// endpoint as Google does.
	loc, err := url.Parse(w.Header().Get("Location"))
	if err != nil {
		return
	}
	if code := loc.Query().Get("code"); code != "" {
		s.mu.Lock()
		s.codes.put(code, grant{user: u, redirectURI: ar.redirectURI, challenge: ar.challenge, scopes: ar.scopes, expires: time.Now().Add(codeTTL)})
		s.mu.Unlock()
		// mockoidc keeps a session per code (the ID of its tokens) and never drops one.
		if old := s.oidcCodes.put(code, struct{}{}); old != "" {
			delete(s.oidc.SessionStore.Store, old)
		}
	}
}

// googleToken checks a token request with Google's answers (400 invalid_grant
// for a bad, replayed or expired code or verifier, 400 redirect_uri_mismatch,
// 401 invalid_client) and leaves minting the tokens to mockoidc.
func (s *Server) googleToken(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	fail := func(status int, code, desc string) {
		writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
	}
	if err := parseTokenForm(w, r); err != nil {
		fail(http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if !s.clientAuth(r) {
		fail(http.StatusUnauthorized, "invalid_client", "Unauthorized")
		return
	}
	// mockoidc reads the client credentials from the form only.
	for _, f := range []url.Values{r.Form, r.PostForm} {
		f.Set("client_id", s.ClientID)
		f.Set("client_secret", s.ClientSecret)
	}
	if s.take(&s.failToken) {
		fail(http.StatusBadRequest, "invalid_grant", "Bad Request")
		return
	}
	if r.PostForm.Get("grant_type") == "authorization_code" {
		g, ok := s.redeem(r.PostForm.Get("code"))
		if !ok {
			fail(http.StatusBadRequest, "invalid_grant", "Bad Request")
			return
		}
		if r.PostForm.Get("redirect_uri") != g.redirectURI {
			fail(http.StatusBadRequest, "redirect_uri_mismatch", "Bad Request")
			return
		}
		if !verifierMatches(r.PostForm.Get("code_verifier"), g.challenge) {
			fail(http.StatusBadRequest, "invalid_grant", "Invalid code verifier.")
			return
		}
	}
	// mockoidc mints the ID token while it answers (googleUser.Claims reads the
	// change); a missing one is cut from its answer.
	s.idChange = s.nextIDChange()
	if s.idChange != IDTokenMissing {
		next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		writeJSON(w, rec.Code, json.RawMessage(rec.Body.Bytes()))
		return
	}
	delete(body, "id_token")
	writeJSON(w, http.StatusOK, body)
}

// googleUser serves a User to mockoidc in the shape of Google's userinfo
// document and ID token claims.
type googleUser struct {
	u User
	s *Server // its idChange, set under oidcMu by the token request
}

func (g googleUser) ID() string { return g.u.ID }

func (g googleUser) Userinfo(scopes []string) ([]byte, error) {
	info := map[string]any{"sub": g.u.ID}
	if slices.Contains(scopes, "profile") {
		if g.u.Name != "" {
			info["name"] = g.u.Name
			given, family, _ := strings.Cut(g.u.Name, " ")
			info["given_name"] = given
			if family != "" {
				info["family_name"] = family
			}
		}
		if g.u.Avatar != "" {
			info["picture"] = g.u.Avatar
		}
	}
	if slices.Contains(scopes, "email") && g.u.Email != "" {
		info["email"] = g.u.Email
		info["email_verified"] = g.u.EmailVerified
		if g.u.EmailVerifiedText {
			info["email_verified"] = strconv.FormatBool(g.u.EmailVerified)
		}
	}
	return json.Marshal(info)
}

func (g googleUser) Claims(scopes []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	c := &googleClaims{IDTokenClaims: base}
	if len(base.Audience) > 0 {
		c.AuthorizedParty = base.Audience[0] // Google sets azp to the client
	}
	switch g.s.idChange {
	case IDTokenExpired:
		base.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Hour))
	case IDTokenNoExpiry:
		base.ExpiresAt = nil
	case IDTokenOtherAudience:
		base.Audience, c.AuthorizedParty = jwt.ClaimStrings{"other-client"}, "other-client"
	case IDTokenOtherParty:
		base.Audience, c.AuthorizedParty = append(base.Audience, "other-client"), "other-client"
	case IDTokenNoPartyManyAudiences:
		base.Audience, c.AuthorizedParty = append(base.Audience, "other-client"), ""
	case IDTokenBareIssuer:
		base.Issuer = strings.TrimPrefix(strings.TrimPrefix(base.Issuer, "https://"), "http://")
	}
	if slices.Contains(scopes, "profile") {
		c.Name, c.Picture = g.u.Name, g.u.Avatar
	}
	if slices.Contains(scopes, "email") && g.u.Email != "" {
		verified := g.u.EmailVerified
		c.Email, c.EmailVerified = g.u.Email, &verified
	}
	return c, nil
}

type googleClaims struct {
	*mockoidc.IDTokenClaims
	AuthorizedParty string `json:"azp,omitempty"`
	Email           string `json:"email,omitempty"`
	EmailVerified   *bool  `json:"email_verified,omitempty"`
	Name            string `json:"name,omitempty"`
	Picture         string `json:"picture,omitempty"`
}
