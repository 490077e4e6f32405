// Command broken is a route group's function with a bug the deploy hook must catch:
// its wiring, dependencies and readiness probe are the group's own (app.Main), but
// every route answers BROKEN_STATUS with BROKEN_MESSAGE, as a version whose every
// answer is 401 (a broken session check) or 404 would. BROKEN_GROUP names the group.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/routegroups"
)

func main() {
	status, err := strconv.Atoi(os.Getenv("BROKEN_STATUS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "broken: BROKEN_STATUS is not a status")
		os.Exit(2)
	}
	msg := os.Getenv("BROKEN_MESSAGE")
	for _, g := range routegroups.All() {
		if g.Name != os.Getenv("BROKEN_GROUP") {
			continue
		}
		build := g.Build
		g.Build = func(ctx context.Context, a *app.App) ([]httpapi.Route, error) {
			routes, err := build(ctx, a)
			for i := range routes {
				routes[i].Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					httpapi.Message(w, r, status, msg)
				})
			}
			return routes, err
		}
		app.Main(g)
		return
	}
	fmt.Fprintln(os.Stderr, "broken: BROKEN_GROUP names no route group")
	os.Exit(2)
}
