package oauth_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
)

// TestAccountEventsAudited: a sign-up, a link and an unlink each leave an audit record
// naming the user (the actor and the target) and the provider, so that a taken-over
// account can be traced.
func TestAccountEventsAudited(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, envOptions{logs: &logs})
	ada := e.login(t, providertest.Google, &adaGoogle)
	id := e.userOf(t, ada)
	if rec := e.link(t, providertest.GitHub, ada, &adaGitHub); rec.Code != http.StatusFound {
		t.Fatal(rec.Code)
	}
	wantMessage(t, e.do(t, http.MethodDelete, "/auth/oauth/unlink/github", ada), http.StatusOK, "Provider unlinked successfully")
	for _, want := range []string{
		fmt.Sprintf(`"actor_id":%d,"action":"user.signup","target":{"kind":"user","id":%[1]d},"changes":{"provider":"google","username":`, id),
		fmt.Sprintf(`"actor_id":%d,"action":"user.link","target":{"kind":"user","id":%[1]d},"changes":{"provider":"github","provider_username":`, id),
		fmt.Sprintf(`"actor_id":%d,"action":"user.unlink","target":{"kind":"user","id":%[1]d},"changes":{"provider":"github"}`, id),
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no record %s in\n%s", want, logs.String())
		}
	}
	// A later login of the same account is no sign-up.
	e.login(t, providertest.Google, &adaGoogle)
	if n := strings.Count(logs.String(), `"action":"user.signup"`); n != 1 {
		t.Errorf("%d sign-up records, want 1", n)
	}
}
