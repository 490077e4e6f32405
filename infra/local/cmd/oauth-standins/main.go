// Command oauth-standins starts stand-ins for the three identity providers (google,
// discord, github) on loopback, so a person can log in and link accounts against a
// service on this machine. `make run` needs none of this: it starts the stand-ins of
// the providers without credentials by itself. This command is for a service started
// otherwise (sam local, a debugger) or stand-ins on fixed ports. It prints the OAUTH_*
// variables that point the service at them, as shell export lines on stdout:
//
//	go run ./infra/local/cmd/oauth-standins > .local/oauth.env &
//	set -a; . .local/oauth.env; set +a
//
// Each stand-in shows a consent page with Authorize and Cancel links (-auto consents
// at once) and signs in as its default account, Jane Doe. The stand-ins accept only the
// service's callback addresses under -api, as a real provider does. The client secrets
// are development values of these stand-ins, not credentials. Ctrl-C stops them.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"

	"github.com/mediacatalog/service/infra/cmdrun"
	"github.com/mediacatalog/service/infra/local/standins"
	"github.com/mediacatalog/service/infra/local/standins/providertest"
)

func main() {
	cmdrun.Main("oauth-standins", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}

// run starts the stand-ins, writes the export lines to out, and serves until ctx is
// done.
func run(ctx context.Context, args []string, out, log io.Writer) error {
	fs := flag.NewFlagSet("oauth-standins", flag.ContinueOnError)
	fs.SetOutput(log)
	host := fs.String("host", "127.0.0.1", "loopback address to listen on")
	port := fs.Int("port", 9101, "port of the google stand-in; discord and github take the next two (0: any free ports)")
	api := fs.String("api", "http://localhost:3000", "the service's API base: the callback addresses the stand-ins accept derive from it")
	auto := fs.Bool("auto", false, "consent at once instead of showing the consent page")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for i, name := range []string{providertest.Google, providertest.Discord, providertest.GitHub} {
		addr := net.JoinHostPort(*host, "0")
		if *port != 0 {
			addr = net.JoinHostPort(*host, strconv.Itoa(*port+i))
		}
		s, stop, err := standins.Start(name, *api, standins.Options{Addr: addr, Auto: *auto})
		if err != nil {
			return err
		}
		defer stop()
		fmt.Fprintf(log, "%s stand-in at %s\n", name, s.URL)
		env := s.Env()
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(out, "export %s=%s\n", k, env[k])
		}
	}
	fmt.Fprintln(log, "export the lines above, then make run; Ctrl-C stops the stand-ins")
	<-ctx.Done()
	return nil
}
