package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mediacatalog/service/shared/config"
)

func TestDatabaseSettings(t *testing.T) {
	tests := []struct {
		env      map[string]string
		maxConns int
		iam      bool
		wantErr  string
	}{
		{map[string]string{}, 0, false, ""},
		{map[string]string{"DB_MAX_CONNS": "2"}, 2, false, ""},
		{map[string]string{"DB_MAX_CONNS": "1", "DB_IAM_AUTH": "true"}, 1, true, ""},
		{map[string]string{"DB_MAX_CONNS": "-1"}, 0, false, "DB_MAX_CONNS"},
		{map[string]string{"DB_MAX_CONNS": "two"}, 0, false, "DB_MAX_CONNS"},
		{map[string]string{"DB_IAM_AUTH": "yes please"}, 0, false, "DB_IAM_AUTH"},
	}
	for _, tc := range tests {
		t.Run(strings.TrimPrefix(strings.ReplaceAll(strings.Trim(strings.Join(keys(tc.env), ","), ","), " ", "_"), ","), func(t *testing.T) {
			c, err := config.Load(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.DBMaxConns != tc.maxConns || c.DBIAMAuth != tc.iam {
				t.Errorf("DBMaxConns %d, DBIAMAuth %v; want %d, %v", c.DBMaxConns, c.DBIAMAuth, tc.maxConns, tc.iam)
			}
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// How admin-users reaches the cdn function: over HTTP to the API's own base URL unless
// told otherwise; any other kind is refused at start.
func TestAvatarNotifier(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		kind     string
		url      string
		function string
		wantErr  bool
	}{
		{"http by default, to the API base", map[string]string{"DB_ENV": "local", "PORT": "3000"}, "http", "http://localhost:3000", "", false},
		{"http to CDN_URL", map[string]string{"AVATAR_NOTIFIER": "http", "CDN_URL": "http://127.0.0.1:4000"}, "http", "http://127.0.0.1:4000", "", false},
		{"lambda", map[string]string{"AVATAR_NOTIFIER": "lambda", "CDN_FUNCTION_NAME": "cdn"}, "lambda", config.DefaultAPIURL, "cdn", false},
		{"neither", map[string]string{"AVATAR_NOTIFIER": "sqs"}, "", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := config.Load(func(k string) string { return tc.env[k] })
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "AVATAR_NOTIFIER") {
					t.Fatalf("err %v, want one naming AVATAR_NOTIFIER", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.AvatarNotifier != tc.kind || c.CDNURL != tc.url || c.CDNFunctionName != tc.function {
				t.Errorf("notifier %q to %q / %q, want %q to %q / %q", c.AvatarNotifier, c.CDNURL, c.CDNFunctionName, tc.kind, tc.url, tc.function)
			}
		})
	}
}

// TestOriginSecrets: ORIGIN_SECRET turns the check on; ORIGIN_SECRET_PREVIOUS is
// accepted beside it (a rotation) but never alone; a short value is refused.
func TestOriginSecrets(t *testing.T) {
	long, other := strings.Repeat("a", 32), strings.Repeat("b", 40)
	tests := []struct {
		now, previous string
		want          []string
		err           bool
	}{
		{"", "", nil, false},
		{"", other, nil, false},
		{long, "", []string{long}, false},
		{long, other, []string{long, other}, false},
		{long, long, []string{long}, false},
		{"short", "", nil, true},
		{long, "short", nil, true},
	}
	for _, tc := range tests {
		cfg, err := config.Load(func(k string) string {
			return map[string]string{"ORIGIN_SECRET": tc.now, "ORIGIN_SECRET_PREVIOUS": tc.previous}[k]
		})
		if (err != nil) != tc.err {
			t.Errorf("%q, %q: error %v, want one: %v", tc.now, tc.previous, err, tc.err)
			continue
		}
		if err != nil && (strings.Contains(err.Error(), "short") || strings.Contains(err.Error(), long)) {
			t.Errorf("the error quotes a secret: %v", err)
		}
		if !tc.err && !slices.Equal(cfg.OriginSecrets, tc.want) {
			t.Errorf("%q, %q: OriginSecrets %q, want %q", tc.now, tc.previous, cfg.OriginSecrets, tc.want)
		}
	}
}
