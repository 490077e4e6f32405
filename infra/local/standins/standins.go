// Package standins starts the identity providers' wire-format stand-ins
// (infra/local/standins/providertest) for a service running on this machine, the
// same way for `make run` (infra/local/cmd/local) and for infra/local/cmd/oauth-standins: each
// accepts only the service's login and link callbacks and uses the development client
// id and secret below (the stand-ins' own values, not credentials). Only local
// commands link it; the Lambda functions never do.
package standins

import (
	"net"
	"strings"

	"github.com/mediacatalog/service/infra/local/standins/providertest"
)

// Options says how a stand-in runs.
type Options struct {
	// Addr is the loopback host:port to listen on; port 0 takes a free one.
	Addr string
	// Auto consents at once instead of showing the consent page (Authorize, Cancel).
	Auto bool
}

// Start starts the stand-in of provider (google, discord or github) for the service
// whose API base is api (such as http://localhost:3000). Its Env holds the OAUTH_*
// variables that point the service at it. The returned func stops it.
func Start(provider, api string, opts Options) (*providertest.Server, func(), error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, nil, &net.AddrError{Err: "the stand-ins listen on loopback only", Addr: opts.Addr}
	}
	po := []providertest.Option{
		providertest.WithAddr(opts.Addr),
		providertest.WithRedirectURIs(Registered(provider, api)...),
	}
	if !opts.Auto {
		po = append(po, providertest.WithConsentPage())
	}
	return providertest.Start(provider, "local-"+provider+"-client", "local-"+provider+"-stand-in-secret", po...)
}

// Registered is what an operator registers at provider for the service whose API base
// is api, and what the stand-ins then accept (docs/oauth-providers.md): google and
// discord take the login and the link callback exactly; a GitHub OAuth app has one
// callback URL and accepts any redirect_uri below its path, so it registers the
// common prefix {api}/auth/oauth, which serves both callbacks.
func Registered(provider, api string) []string {
	base := strings.TrimRight(api, "/")
	if provider == providertest.GitHub {
		return []string{base + "/auth/oauth"}
	}
	return []string{base + "/auth/oauth/" + provider + "/callback", base + "/auth/oauth/link/" + provider + "/callback"}
}
