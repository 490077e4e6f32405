package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/readiness"
)

// check is one dependency's readiness check: nil, or what it met; detail says what a
// passed check saw.
type check struct {
	name string
	run  func(ctx context.Context) (detail string, err error)
}

// Check adds the readiness check name of a dependency a group's Build made (its
// bucket, its DynamoDB table); DB and Sessions add theirs. A name is checked once.
func (a *App) Check(name string, run func(ctx context.Context) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.addCheck(check{name: name, run: func(ctx context.Context) (string, error) { return "", run(ctx) }})
}

// addCheck adds c unless its name is checked already; a.mu is held.
func (a *App) addCheck(c check) {
	if !slices.ContainsFunc(a.checks, func(o check) bool { return o.name == c.name }) {
		a.checks = append(a.checks, c)
	}
}

// Readiness is the answer of group's function to a readiness probe (package
// readiness), h its handler (Handler): every dependency check at once, then the group's
// route probes one by one through the Lambda adapter, as API Gateway's events with the
// origin secret CloudFront adds, all within readiness.Timeout.
func (a *App) Readiness(g Group, h http.Handler) lambdahttp.Readiness {
	serve := lambdahttp.Proxy(h)
	return func(ctx context.Context) readiness.Result {
		ctx, cancel := context.WithTimeout(ctx, readiness.Timeout)
		defer cancel()
		a.mu.Lock()
		checks := append([]check{{name: "secrets", run: a.secretsReady(g)}}, a.checks...)
		a.mu.Unlock()
		res := readiness.Result{Checks: make([]readiness.Check, len(checks))}
		var wg sync.WaitGroup
		for i, c := range checks {
			wg.Go(func() {
				start := time.Now()
				detail, err := c.run(ctx)
				res.Checks[i] = readiness.Check{Name: c.name, OK: err == nil, Detail: detail, Millis: time.Since(start).Milliseconds()}
				if err != nil {
					res.Checks[i].Detail = err.Error()
				}
			})
		}
		wg.Wait()
		for _, p := range readiness.Probes[g.Name] {
			res.Checks = append(res.Checks, a.routeProbe(ctx, serve, p))
		}
		res.Ready = !slices.ContainsFunc(res.Checks, func(c readiness.Check) bool { return !c.OK })
		return res
	}
}

// secretsReady checks what the function read at start: the secrets SECRETS_ARN lists
// (the function does not start when one cannot be read), the origin secret, which every
// deployed function checks, and the signing secret of a group with sessions.
func (a *App) secretsReady(g Group) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		listed := 0
		for _, arn := range strings.Split(a.Getenv("SECRETS_ARN"), ",") {
			if strings.TrimSpace(arn) != "" {
				listed++
			}
		}
		var errs []error
		if len(a.Config.OriginSecrets) == 0 && !a.Config.Local() {
			errs = append(errs, errors.New("ORIGIN_SECRET is not set: the function would answer requests that did not come through the distribution"))
		}
		if slices.Contains(g.Env, "JWT_SECRET") {
			if err := a.Config.RequireJWTSecret(); err != nil {
				errs = append(errs, err)
			}
		}
		return fmt.Sprintf("%d secrets read at start", listed), errors.Join(errs...)
	}
}

// routeProbe serves p through serve and judges its answer.
func (a *App) routeProbe(ctx context.Context, serve func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), p readiness.Probe) readiness.Check {
	start := time.Now()
	c := readiness.Check{Name: p.Name()}
	ev, err := a.probeEvent(p)
	if err == nil {
		var resp events.APIGatewayV2HTTPResponse
		if resp, err = serve(ctx, ev); err == nil {
			body := []byte(resp.Body)
			if resp.IsBase64Encoded {
				body, err = base64.StdEncoding.DecodeString(resp.Body)
			}
			c.Status, c.Body = resp.StatusCode, string(body)
			if err == nil {
				err = p.Judge(resp.StatusCode, body)
			}
		}
	}
	c.OK, c.Millis = err == nil, time.Since(start).Milliseconds()
	if err != nil {
		c.Detail = err.Error()
	}
	return c
}

// probeEvent is p as API Gateway's event, with the origin secret and, for a probe
// with a session, the probe's token.
func (a *App) probeEvent(p readiness.Probe) (events.APIGatewayV2HTTPRequest, error) {
	call := lambdahttp.Call{
		Method: p.Method(), RouteKey: p.RouteKey, Path: p.Path, PathParameters: p.PathParameters, Query: p.Query,
		UserAgent: "media-catalog-readiness", RequestID: "readiness-" + p.Method() + "-" + p.Path, Time: time.Now(),
	}
	if len(a.Config.OriginSecrets) > 0 {
		call.Header = map[string]string{strings.ToLower(httpapi.OriginSecretHeader): a.Config.OriginSecrets[0]}
	}
	if p.Session {
		a.mu.Lock()
		s := a.sessions
		a.mu.Unlock()
		if s == nil {
			return events.APIGatewayV2HTTPRequest{}, errors.New("the group has no sessions")
		}
		tok, err := s.ProbeToken()
		if err != nil {
			return events.APIGatewayV2HTTPRequest{}, err
		}
		call.Cookies = []string{"refreshToken=" + tok}
	}
	return call.Request(), nil
}
