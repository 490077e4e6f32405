package secrets_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mediacatalog/service/shared/secrets"
)

// secretsManager speaks Secrets Manager's GetSecretValue (JSON 1.1 protocol).
type secretsManager struct {
	mu     sync.Mutex
	values map[string]string // ARN -> SecretString
	calls  []string
}

func (s *secretsManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var in struct{ SecretId string }
	body, _ := io.ReadAll(r.Body)
	if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || json.Unmarshal(body, &in) != nil ||
		!strings.Contains(r.Header.Get("Authorization"), "/secretsmanager/aws4_request") {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.calls = append(s.calls, in.SecretId)
	v, ok := s.values[in.SecretId]
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"ARN": in.SecretId, "Name": "n", "SecretString": v, "VersionId": "v1"})
}

const (
	jwtARN   = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:media-catalog/jwt-AbCdEf"
	oauthARN = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:media-catalog/oauth-GhIjKl"
	badARN   = "arn:aws:secretsmanager:eu-central-1:123456789012:secret:media-catalog/bad-MnOpQr"
)

func TestEnvironment(t *testing.T) {
	sm := &secretsManager{values: map[string]string{
		jwtARN:   `{"JWT_SECRET":"from-secrets-manager-0123456789abcdef"}`,
		oauthARN: `{"OAUTH_GITHUB_CLIENT_ID":"gh-id","OAUTH_GITHUB_CLIENT_SECRET":"gh-secret"}`,
		badARN:   `not json: hunter2`,
	}}
	srv := httptest.NewServer(sm)
	defer srv.Close()
	base := map[string]string{
		"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret",
		secrets.EndpointVariable: srv.URL, "DB_ENV": "production", "JWT_SECRET": "from-the-environment",
	}
	tests := []struct {
		name      string
		arns      string
		want      map[string]string // variables as the function sees them
		wantCalls []string
		wantErr   string
	}{
		{"no secrets: the environment as it is", "", map[string]string{"JWT_SECRET": "from-the-environment", "DB_ENV": "production"}, nil, ""},
		{"one secret", jwtARN, map[string]string{"JWT_SECRET": "from-secrets-manager-0123456789abcdef", "DB_ENV": "production", "OAUTH_GITHUB_CLIENT_ID": ""}, []string{jwtARN}, ""},
		{"two secrets, one read each", jwtARN + ", " + oauthARN, map[string]string{
			"JWT_SECRET": "from-secrets-manager-0123456789abcdef", "OAUTH_GITHUB_CLIENT_ID": "gh-id", "OAUTH_GITHUB_CLIENT_SECRET": "gh-secret",
		}, []string{jwtARN, oauthARN}, ""},
		{"unknown secret", jwtARN + "x", nil, []string{jwtARN + "x"}, "ResourceNotFoundException"},
		{"not a JSON object", badARN, nil, []string{badARN}, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sm.mu.Lock()
			sm.calls = nil
			sm.mu.Unlock()
			env := map[string]string{secrets.ARNsVariable: tc.arns}
			for k, v := range base {
				env[k] = v
			}
			getenv, err := secrets.Environment(t.Context(), func(k string) string { return env[k] })
			sm.mu.Lock()
			calls := strings.Join(sm.calls, " ")
			sm.mu.Unlock()
			if calls != strings.Join(tc.wantCalls, " ") {
				t.Errorf("GetSecretValue calls %q, want %q", calls, tc.wantCalls)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the error shows the secret's value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got := getenv(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}
