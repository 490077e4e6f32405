package oauth

import (
	"log/slog"
	"net/http"

	"github.com/mediacatalog/service/shared/oauth/providers"
)

// LoadProviders builds the providers configured in the environment
// (OAUTH_<PROVIDER>_CLIENT_ID and _CLIENT_SECRET, endpoint overrides) and logs, by name
// only, which are offered and which are skipped: a skipped provider answers like an
// unsupported one. client may be nil.
func LoadProviders(getenv func(string) string, client *http.Client, log *slog.Logger) map[string]providers.Provider {
	configured, skipped := providers.FromEnv(getenv, client)
	if log != nil {
		offered := make([]string, 0, len(configured))
		for _, name := range providers.Names() {
			if _, ok := configured[name]; ok {
				offered = append(offered, name)
			}
		}
		log.Info("oauth providers", "offered", offered)
		if len(skipped) > 0 {
			log.Warn("oauth providers not offered: client id or secret missing, or an endpoint override invalid",
				"skipped", skipped)
		}
	}
	return configured
}
