package main

import (
	"fmt"
	"maps"
	"strings"

	"github.com/mediacatalog/service/infra/local/standins"
	"github.com/mediacatalog/service/shared/oauth/providers"
)

// startStandIns starts, on free loopback ports, the stand-in of each provider whose
// OAUTH_<P>_CLIENT_ID and OAUTH_<P>_CLIENT_SECRET are both unset, and returns the
// OAUTH_* variables that point the service at them. A provider with credentials keeps
// them. lines has one line per provider for the user: how to log in. The returned func
// stops the stand-ins.
func startStandIns(api string, getenv func(string) string) (env map[string]string, lines []string, stop func(), err error) {
	env = map[string]string{}
	var stops []func()
	stopAll := func() {
		for _, stop := range stops {
			stop()
		}
	}
	for _, name := range providers.Names() {
		prefix := "OAUTH_" + strings.ToUpper(name) + "_"
		id, secret := getenv(prefix+"CLIENT_ID"), getenv(prefix+"CLIENT_SECRET")
		login := api + "/auth/oauth/" + name
		switch {
		case id != "" && secret != "":
			lines = append(lines, fmt.Sprintf("oauth %s: credentials from the environment (%sCLIENT_ID); log in at %s", name, prefix, login))
			continue
		case id != "" || secret != "":
			lines = append(lines, fmt.Sprintf("oauth %s: not offered: set both %sCLIENT_ID and %sCLIENT_SECRET, or neither for a local stand-in", name, prefix, prefix))
			continue
		}
		s, stop, err := standins.Start(name, api, standins.Options{})
		if err != nil {
			stopAll()
			return nil, nil, nil, err
		}
		stops = append(stops, stop)
		maps.Copy(env, s.Env())
		lines = append(lines, fmt.Sprintf("oauth %s: local stand-in at %s (no %sCLIENT_ID set); log in at %s and click Authorize", name, s.URL, prefix, login))
	}
	return env, lines, stopAll, nil
}
