package iamcheck_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mediacatalog/service/infra/local/demo"
	"github.com/mediacatalog/service/infra/local/localservices"
	"github.com/mediacatalog/service/infra/local/standins"
	"github.com/mediacatalog/service/infra/local/standins/providertest"
	"github.com/mediacatalog/service/infra/tests/iamcheck"
	"github.com/mediacatalog/service/infra/tests/samtemplate"
	"github.com/mediacatalog/service/infra/tests/testenv"
	"github.com/mediacatalog/service/shared/app"
	"github.com/mediacatalog/service/shared/auth"
	"github.com/mediacatalog/service/shared/awsconfig"
	"github.com/mediacatalog/service/shared/config"
	"github.com/mediacatalog/service/shared/deployhook"
	"github.com/mediacatalog/service/shared/httpapi"
	"github.com/mediacatalog/service/shared/lambdahttp"
	"github.com/mediacatalog/service/shared/oauth"
	"github.com/mediacatalog/service/shared/readiness"
	"github.com/mediacatalog/service/shared/routegroups"
	"github.com/mediacatalog/service/shared/secrets"
	"github.com/mediacatalog/service/shared/telemetry"
)

// Where the stacks are deployed: the parameter sets' ARNs name this region and account.
const (
	region    = "eu-central-1"
	accountID = "123456789012"
	hook      = "deploy-hook"
)

// tag is what a context says of the function whose invocation it belongs to: every
// call made with it, or with a context derived from it, is that function's, under its
// role, as Lambda runs each function with its own credentials.
type tag struct{ set, function string }

type tagKey struct{}

func as(ctx context.Context, set, function string) context.Context {
	return context.WithValue(ctx, tagKey{}, tag{set, function})
}

// recorder keeps every AWS call, with the function that made it.
type recorder struct {
	mu    sync.Mutex
	calls []recorded
}

type recorded struct {
	tag  tag
	call telemetry.AWSCall
}

func (r *recorder) observe(ctx context.Context, c telemetry.AWSCall) {
	t, _ := ctx.Value(tagKey{}).(tag)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, recorded{t, c})
}

// world is one parameter set's stack as it runs here: each function built by its own
// wiring with the environment the transformed template gives it, its AWS endpoints at
// the stand-ins (dynalite, gofakes3, moto's Secrets Manager, awsStandIn), its database
// the test's (the token for the proxy is signed all the same).
type world struct {
	set       string
	stack     *samtemplate.Stack
	account   iamcheck.Account
	functions map[string]string            // principal name -> logical id
	env       map[string]map[string]string // function -> its environment

	application      string            // the CodeDeploy application's name
	deploymentGroups map[string]string // route group -> its deployment group's name
	frontend         string
	originSecret     string

	db        *testenv.DB
	providers map[string]*providertest.Server
	standIn   *awsStandIn
	endpoint  string // awsStandIn's URL
	handlers  map[string]http.Handler
	// entries are the functions' Lambda handlers, as Lambda invokes them (a readiness
	// probe of the deploy hook, or an API Gateway event).
	entries map[string]func(context.Context, lambdahttp.Invocation) (any, error)
	admin   *http.Cookie
	logs    *lockedBuffer
}

// newWorld transforms the template with the parameter set, resolves each function's
// environment, and prepares what the functions expect to exist: the tables, the
// bucket, the secrets (in moto) and the OAuth providers (stand-ins).
func newWorld(t *testing.T, set, stackName, motoURL string, cfn *samtemplate.CFN) *world {
	t.Helper()
	stack, err := samtemplate.NewStack(cfn, paramsPath(set), stackName, region, accountID)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{set: set, stack: stack, env: map[string]map[string]string{}, deploymentGroups: map[string]string{},
		handlers: map[string]http.Handler{}, entries: map[string]func(context.Context, lambdahttp.Invocation) (any, error){}, providers: map[string]*providertest.Server{}, logs: &lockedBuffer{}}
	w.standIn = &awsStandIn{w: w, deployments: map[string]string{}}
	srv := httptest.NewServer(w.standIn)
	t.Cleanup(srv.Close)
	w.endpoint = srv.URL
	if w.functions, err = iamcheck.Functions(stack); err != nil {
		t.Fatal(err)
	}
	w.account = iamcheck.Account{ID: accountID, Region: region, Partition: stack.Partition, Proxies: map[string]string{}, SecretKeys: map[string]string{}}
	if stack.Exists("DbProxy") {
		host := w.resolve(t, map[string]any{"Fn::GetAtt": []any{"DbProxy", "Endpoint"}})
		arn := w.resolve(t, map[string]any{"Fn::GetAtt": []any{"DbProxy", "DBProxyArn"}})
		w.account.Proxies[host] = arn[strings.LastIndex(arn, ":")+1:]
	} else {
		w.account.Proxies[stack.Params["DbProxyEndpoint"]] = stack.Params["DbProxyResourceId"]
	}
	if key := stack.Params["SecretsKmsKeyArn"]; key != "" {
		for _, p := range []string{"OAuthSecretArn", "DbWriterSecretArn", "DbReaderSecretArn", "DbCdnSecretArn"} {
			if arn := stack.Params[p]; arn != "" {
				w.account.SecretKeys[arn] = key
			}
		}
	}
	w.application = w.resolve(t, map[string]any{"Ref": "ServerlessDeploymentApplication"})
	for _, id := range cfn.OfType("AWS::Lambda::Alias") {
		up, _ := cfn.Resources[id].UpdatePolicy["CodeDeployLambdaAliasUpdate"].(map[string]any)
		if up == nil {
			continue
		}
		fn := w.resolve(t, cfn.Resources[id].Properties["FunctionName"])
		w.deploymentGroups[strings.TrimPrefix(fn, stackName+"-")] = w.resolve(t, up["DeploymentGroupName"])
	}

	ctx := context.Background()
	for name, id := range w.functions {
		vars, err := stack.Resolve(cfn.Resources[id].Properties["Environment"].(map[string]any)["Variables"])
		if err != nil {
			t.Fatalf("%s's environment: %v", name, err)
		}
		env := map[string]string{}
		for k, v := range vars.(map[string]any) {
			env[k] = fmt.Sprint(v)
		}
		fnName := w.resolve(t, cfn.Resources[id].Properties["FunctionName"])
		// What Lambda adds, and where this machine has the services.
		for k, v := range map[string]string{
			"AWS_REGION": region, "AWS_LAMBDA_FUNCTION_NAME": fnName,
			"AWS_ACCESS_KEY_ID": "ASIA" + strings.ToUpper(strings.ReplaceAll(name, "-", "")), "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
			"AWS_ENDPOINT_URL_DYNAMODB": testenv.DynamoEndpoint(t), "AWS_ENDPOINT_URL_S3": testenv.S3Endpoint(t),
			"AWS_ENDPOINT_URL_CLOUDFRONT": w.endpoint, "AWS_ENDPOINT_URL_LAMBDA": w.endpoint, secrets.EndpointVariable: motoURL,
		} {
			env[k] = v
		}
		w.env[name] = env
	}
	w.frontend = w.env["oauth"]["FRONTEND_URL"]

	// The tables and the bucket the template creates.
	oauthEnv := w.env["oauth"]
	if err := localservices.EnsureTables(ctx, oauthEnv["AWS_ENDPOINT_URL_DYNAMODB"], region, oauthEnv["OAUTH_STATE_TABLE"], oauthEnv["RATE_LIMIT_TABLE"]); err != nil {
		t.Fatal(err)
	}
	if err := localservices.EnsureBucket(ctx, oauthEnv["AWS_ENDPOINT_URL_S3"], region, w.env["cdn"]["S3_BUCKET"]); err != nil {
		t.Fatal(err)
	}
	// The OAuth applications: stand-ins accepting what an operator registers for the
	// stack's API address; their endpoints are the oauth function's only extra variables.
	oauthSecret := map[string]string{}
	for _, p := range []string{providertest.Google, providertest.Discord, providertest.GitHub} {
		s := providertest.New(t, p, p+"-client-id", p+"-client-secret", providertest.WithRedirectURIs(standins.Registered(p, oauthEnv["API_URL"])...))
		w.providers[p] = s
		for k, v := range s.Env() {
			if strings.HasSuffix(k, "_CLIENT_ID") || strings.HasSuffix(k, "_CLIENT_SECRET") {
				oauthSecret[k] = v
			} else {
				oauthEnv[k] = v
			}
		}
	}
	// The secrets, under the ARNs the functions are given (moto finds a full ARN's
	// secret by the name after "secret:").
	w.originSecret = "origin-" + strings.Repeat("0123456789", 4)
	values := map[string]map[string]string{
		w.resolve(t, map[string]any{"Ref": "JwtSecret"}):    {"JWT_SECRET": "jwt-" + strings.Repeat("abcdefghij", 6)},
		w.resolve(t, map[string]any{"Ref": "OriginSecret"}): {"ORIGIN_SECRET": w.originSecret},
		stack.Params["OAuthSecretArn"]:                      oauthSecret,
	}
	sm := secretsmanager.NewFromConfig(awsconfig.ForEndpoint(region, motoURL, func(string) string { return "" }), func(o *secretsmanager.Options) {
		o.BaseEndpoint = aws.String(motoURL)
	})
	for name, env := range w.env {
		for _, arn := range strings.Split(env[secrets.ARNsVariable], ",") {
			if arn == "" {
				continue
			}
			if _, ok := values[arn]; !ok {
				t.Fatalf("%s reads secret %s, which is none of the stack's secrets", name, arn)
			}
		}
	}
	for arn, v := range values {
		b, _ := json.Marshal(v)
		if _, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(arn[strings.Index(arn, ":secret:")+len(":secret:"):]),
			SecretString: aws.String(string(b))}); err != nil {
			t.Fatalf("create secret %s in moto: %v", arn, err)
		}
	}
	w.db = testenv.NewDemoDB(t)
	return w
}

func (w *world) resolve(t *testing.T, v any) string {
	t.Helper()
	s, err := w.stack.ResolveString(v)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (w *world) getenv(function string) func(string) string {
	env := w.env[function]
	return func(k string) string { return env[k] }
}

// build makes each route group's function as its main does (app.Run): the secrets
// read first, then the configuration, then the group's routes, with the shared
// middleware; the pool's IAM token is signed as for a new connection to the proxy
// (the connection itself goes to the test's database).
func (w *world) build(t *testing.T) {
	t.Helper()
	log := slog.New(slog.NewJSONHandler(w.logs, nil))
	for _, g := range routegroups.All() {
		ctx := as(context.Background(), w.set, g.Name)
		getenv, err := g.Secrets(ctx, w.getenv(g.Name))
		if err != nil {
			t.Fatalf("%s: secrets: %v", g.Name, err)
		}
		cfg, err := config.Load(getenv)
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		a := app.New(cfg, log.With("function", g.Name))
		a.Getenv = getenv
		t.Cleanup(a.Close)
		db, err := a.DB(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pc := db.Pool.Config()
		if pc.BeforeConnect == nil {
			t.Fatalf("%s: no IAM token before a connection (DB_IAM_AUTH %q)", g.Name, getenv("DB_IAM_AUTH"))
		}
		if err := pc.BeforeConnect(ctx, pc.ConnConfig.Copy()); err != nil {
			t.Fatalf("%s: IAM token: %v", g.Name, err)
		}
		a.SetDB(w.db.DB)
		h, err := a.Handler(ctx, g)
		if err != nil {
			t.Fatalf("%s: %v", g.Name, err)
		}
		w.handlers[g.Name] = w.tagged(g.Name, h)
		entry, name := lambdahttp.Entry(h, a.Readiness(g, h)), g.Name
		w.entries[g.Name] = func(ctx context.Context, inv lambdahttp.Invocation) (any, error) {
			return entry(as(ctx, w.set, name), inv)
		}
		if g.Name == "admin-users" {
			sessions, err := auth.NewSessions(w.db.DB, cfg)
			if err != nil {
				t.Fatal(err)
			}
			w.admin = testenv.SessionCookie(t, sessions, demo.AdminUserID)
		}
	}
}

// tagged serves h as function's invocation.
func (w *world) tagged(function string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(rw, r.WithContext(as(r.Context(), w.set, function)))
	})
}

// do sends a request to a function as CloudFront does (the origin secret) from the
// frontend (its Origin), checks the answer against the OpenAPI document and its status.
func (w *world) do(t *testing.T, function, method, target string, body any, want int, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	req := testenv.Request(method, target, body, cookies...)
	req.Header.Set(httpapi.OriginSecretHeader, w.originSecret)
	req.Header.Set("Origin", w.frontend)
	rec := testenv.Do(t, w.handlers[function], req)
	if rec.Code != want {
		t.Errorf("%s: %s %s answered %d %.300s, want %d", function, method, target, rec.Code, rec.Body, want)
	}
	return rec
}

// drive runs every event of events/ through its function's Lambda entry, then the
// write flows end to end: login and link, image uploads, replacements and deletes, a
// user's deletion, the avatar change through Lambda to the cdn function, the cdn's
// reads (one of objects that are gone), and the deploy hook's event for every group.
func (w *world) drive(t *testing.T) {
	t.Helper()
	for _, g := range []string{"oauth", "tags", "publishers", "admin-roles", "admin-permissions", "admin-contributors", "cdn", "admin-users"} {
		w.events(t, g)
	}
	w.oauthFlows(t)
	w.imageFlows(t)
	w.deployHook(t)
}

// events runs a function's events (writes that create first, deletes last, as
// infra/tests/smoke orders them) with the demo admin's session, the origin secret and the
// stack's frontend as their origin.
func (w *world) events(t *testing.T, function string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "events", function, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events for %s", function)
	}
	rank := func(f string) int {
		switch b := filepath.Base(f); {
		case strings.HasPrefix(b, "add-"), strings.HasPrefix(b, "update-"):
			return 0
		case strings.HasPrefix(b, "delete-"), strings.HasPrefix(b, "logout-"):
			return 2
		}
		return 1
	}
	sort.SliceStable(files, func(i, j int) bool { return rank(files[i]) < rank(files[j]) })
	for _, f := range files {
		ev := testenv.Event(t, filepath.Join(function, filepath.Base(f)))
		for i, c := range ev.Cookies {
			if strings.HasPrefix(c, auth.RefreshCookie+"=") {
				ev.Cookies[i] = auth.RefreshCookie + "=" + w.admin.Value
			}
		}
		if ev.Headers == nil {
			ev.Headers = map[string]string{}
		}
		ev.Headers[strings.ToLower(httpapi.OriginSecretHeader)] = w.originSecret
		if _, ok := ev.Headers["origin"]; ok {
			ev.Headers["origin"] = w.frontend
		}
		resp := testenv.Invoke(t, w.handlers[function], ev)
		if resp.StatusCode >= 500 {
			t.Errorf("%s %s: %d %.300s", function, filepath.Base(f), resp.StatusCode, resp.Body)
		}
	}
}

// oauthFlows logs a new user in with Google, links GitHub to the account, lists the
// connections and unlinks GitHub.
func (w *world) oauthFlows(t *testing.T) {
	t.Helper()
	flow := func(start string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
		rec := w.do(t, "oauth", http.MethodGet, start, nil, http.StatusFound, cookies...)
		var state *http.Cookie
		for _, c := range rec.Result().Cookies() {
			if c.Name == oauth.StateCookie {
				state = c
			}
		}
		if state == nil {
			t.Fatalf("%s set no %s cookie", start, oauth.StateCookie)
		}
		cb, err := providertest.Authorize(context.Background(), rec.Header().Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		return w.do(t, "oauth", http.MethodGet, cb.RequestURI(), nil, http.StatusFound, append(cookies, state)...)
	}
	login := flow("/auth/oauth/google")
	var refresh *http.Cookie
	for _, c := range login.Result().Cookies() {
		if c.Name == auth.RefreshCookie {
			refresh = c
		}
	}
	if refresh == nil {
		t.Fatalf("the login set no %s cookie: %s", auth.RefreshCookie, login.Header().Get("Location"))
	}
	link := flow("/auth/oauth/link/github", refresh)
	if loc, _ := url.Parse(link.Header().Get("Location")); loc == nil || loc.Query().Get("link_success") != "github" {
		t.Errorf("link answered %s", link.Header().Get("Location"))
	}
	w.do(t, "oauth", http.MethodGet, "/auth/oauth/connections", nil, http.StatusOK, refresh)
	w.do(t, "oauth", http.MethodDelete, "/auth/oauth/unlink/github", nil, http.StatusOK, refresh)
}

// imageFlows uploads, replaces and deletes profile pictures and contributor avatars,
// deletes a user and a contributor who have one, and reads avatars from the cdn, one
// whose objects are gone.
func (w *world) imageFlows(t *testing.T) {
	t.Helper()
	image := func(event string) map[string]string {
		var body map[string]string
		if err := json.Unmarshal([]byte(testenv.Event(t, event).Body), &body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	png := image("admin-users/update-image.json")
	jpeg := image("admin-contributors/update-avatar.json")
	user := demo.EditorUserID
	ref := func() string {
		return w.db.Text(t, `SELECT coalesce(profile_image, '') FROM users WHERE id = $1`, user)
	}

	// Upload, replace (the old objects go), read through the cdn.
	w.do(t, "admin-users", http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", user), png, http.StatusOK, w.admin)
	first := ref()
	w.do(t, "admin-users", http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", user), png, http.StatusOK, w.admin)
	if first == "" || ref() == first {
		t.Errorf("the replacement left the reference %q (was %q)", ref(), first)
	}
	w.do(t, "cdn", http.MethodGet, fmt.Sprintf("/user/avatar/%d", user), nil, http.StatusOK)
	w.do(t, "cdn", http.MethodGet, fmt.Sprintf("/user/avatar/%d/high", user), nil, http.StatusOK)
	// An upload whose row write fails once its objects are stored (a trigger refuses it)
	// removes every version of them: ListObjectVersions under the upload's own folder.
	w.db.Exec(t, `CREATE OR REPLACE FUNCTION iamcheck_refuse() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'refused by the test'; END$$`)
	w.db.Exec(t, `CREATE TRIGGER iamcheck_refuse BEFORE UPDATE OF profile_image ON users FOR EACH ROW EXECUTE FUNCTION iamcheck_refuse()`)
	w.do(t, "admin-users", http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", user), png, http.StatusInternalServerError, w.admin)
	w.db.Exec(t, `DROP TRIGGER iamcheck_refuse ON users`)
	w.db.Exec(t, `DROP FUNCTION iamcheck_refuse()`)
	// A reference whose objects are gone (as a read racing a replacement sees it): S3
	// answers the cdn 404, for which it must be allowed to list the bucket.
	w.db.Exec(t, `UPDATE users SET profile_image = $1 WHERE id = $2`, first, demo.AdminUserID)
	w.do(t, "cdn", http.MethodGet, fmt.Sprintf("/user/avatar/%d", demo.AdminUserID), nil, http.StatusOK)
	w.db.Exec(t, `UPDATE users SET profile_image = NULL WHERE id = $1`, demo.AdminUserID)
	// Delete the picture; upload one again and delete the user.
	w.do(t, "admin-users", http.MethodDelete, fmt.Sprintf("/admin-users/delete-image/%d", user), nil, http.StatusOK, w.admin)
	w.do(t, "admin-users", http.MethodPost, fmt.Sprintf("/admin-users/update-image/%d", user), png, http.StatusOK, w.admin)
	w.do(t, "admin-users", http.MethodDelete, fmt.Sprintf("/admin-users/delete/%d", user), nil, http.StatusOK, w.admin)

	// A contributor's avatar: upload, replace, delete; then a contributor deleted with one.
	var contributor int64
	for i := range 2 {
		last := fmt.Sprintf("Avatar %s %d", w.set, i)
		w.do(t, "admin-contributors", http.MethodPost, "/admin-contributors/add", map[string]string{"first_name": "Ada", "last_name": last}, http.StatusOK, w.admin)
		contributor = w.db.Int(t, `SELECT id FROM contributors WHERE last_name = $1`, last)
		path := fmt.Sprintf("/admin-contributors/update-avatar/%d", contributor)
		w.do(t, "admin-contributors", http.MethodPost, path, jpeg, http.StatusOK, w.admin)
		w.do(t, "admin-contributors", http.MethodPost, path, jpeg, http.StatusOK, w.admin)
		if i == 0 {
			w.do(t, "admin-contributors", http.MethodDelete, fmt.Sprintf("/admin-contributors/delete-avatar/%d", contributor), nil, http.StatusOK, w.admin)
		}
	}
	w.do(t, "admin-contributors", http.MethodDelete, fmt.Sprintf("/admin-contributors/delete/%d", contributor), nil, http.StatusOK, w.admin)
}

// deployHook runs the deploy hook as its main makes it, on CodeDeploy's event of a
// deployment of each route group's function.
func (w *world) deployHook(t *testing.T) {
	t.Helper()
	getenv := w.getenv(hook)
	cfg := awsconfig.ForEndpoint(getenv("AWS_REGION"), w.endpoint, getenv)
	h := deployhook.New(cfg, w.endpoint, getenv("FUNCTION_PREFIX"), slog.New(slog.NewJSONHandler(w.logs, nil)).With("function", hook))
	groups := make([]string, 0, len(readiness.Probes))
	for g := range readiness.Probes {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		id := "d-" + g
		w.standIn.mu.Lock()
		w.standIn.deployments[id] = g
		w.standIn.mu.Unlock()
		if err := h.Handle(as(context.Background(), w.set, hook), deployhook.Event{DeploymentID: id, HookExecutionID: "hook-" + id}); err != nil {
			t.Errorf("deploy hook on %s: %v", id, err)
		}
	}
	w.standIn.mu.Lock()
	defer w.standIn.mu.Unlock()
	// Every version here is healthy: a hook that fails one has met a call its role or
	// the function's does not allow (or a probe that the wiring does not answer).
	if len(w.standIn.reports) != len(groups) {
		t.Errorf("the hook reported %v, want one report per group", w.standIn.reports)
	}
	for _, r := range w.standIn.reports {
		if !strings.HasSuffix(r, " Succeeded") {
			t.Errorf("%s: the deploy hook reported %s, want Succeeded for a healthy version", w.set, r)
		}
	}
}

func paramsPath(set string) string {
	return filepath.Join(samtemplate.Dir(), "testdata", set+".json")
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }
