# Media Catalog Service. `make run` starts everything locally, `make test` runs every
# test; both install or start what they need. See README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
PORT      ?= 3000
ENV       ?= staging
SCALE     ?= 0
STACK_DIR ?= .local
BUILD_DIR ?= build
# Go's test timeout per package; CI's whole run has 90 minutes, we aim well under 15.
TEST_TIMEOUT ?= 10m

LAMBDA_FLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'
LAMBDA_ENV   := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
FUNCTIONS    := oauth tags cdn admin-users admin-roles admin-permissions admin-contributors publishers

# Services the stack starts for a command: PostgreSQL, dynalite (DynamoDB), gofakes3 (S3).
WITHSTACK := $(GO) run ./infra/local/cmd/withstack

.PHONY: help run test fuzz bench bench-compare bench-baseline bench-path bench-scale bench-edge soak build generate client schema iam-table migrate migrate-rehearsal purge-client reconcile-images restore-revocations restore-rehearsal backup-check seed token grant-role db-roles deploy rollback redeploy lint tools clean \
	$(addprefix build-,OAuthFunction TagsFunction CdnFunction AdminUsersFunction \
	AdminRolesFunction AdminPermissionsFunction AdminContributorsFunction PublishersFunction \
	DeployHookFunction)

help: ## list the targets
	@grep -E '^[a-zA-Z_%-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | sort

run: ## start the whole service locally on http://localhost:$(PORT) (Ctrl-C stops it)
	@bash infra/scripts/tools.sh run
	$(GO) run ./infra/local/cmd/local -dir $(STACK_DIR) -port $(PORT)

# The packages whose own code shares state between goroutines (the request's work
# deadline; the cdn's shared reference reads and image cache) run a second time under
# the race detector (cgo: gcc is on every machine of this kind).
RACE_PKGS := ./shared/httpapi ./shared/cdn

test: tools ## run every test against real PostgreSQL, dynalite, gofakes3 and chromium
	$(WITHSTACK) -ephemeral -- sh -c '$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./... && \
		CGO_ENABLED=1 $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PKGS)'

# Each fuzz target, package by package, for FUZZTIME (make test runs their seed corpora).
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	shared/httpapi:FuzzParams \
	shared/adminpermissions:FuzzDecodePermission \
	shared/adminroles:FuzzDecodeAddRole shared/adminroles:FuzzDecodeEditRole \
	shared/adminusers:FuzzDecodeEditUser \
	shared/admincontributors:FuzzDecodeAddContributor shared/admincontributors:FuzzDecodeEditContributor \
	shared/avatars:FuzzDecodeUpload \
	shared/images:FuzzDecodeInput shared/images:FuzzImageHeaders

fuzz: ## run each fuzz target for FUZZTIME (default 30s)
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz ./$${t%%:*} $${t##*:} for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$${t##*:}$$" -fuzztime $(FUZZTIME) ./$${t%%:*} || exit 1; \
	done

# The cold-start benchmark runs a fixed 300 pairs (hello world, function) per function
# and prints, per function, the median of (time to first response - hello world's)
# against the 10 ms target and the stripped linux/arm64 size against 20 MB: medians of
# pairs need a fixed count, a time-based b.N gives too few on a busy machine.
# BenchmarkAvatarServer (infra/local/cmd/local) loads the local server's avatar route with wrk,
# interleaved with a static reference (the same bytes and caching headers on the same
# server settings) and the bare trivial server, and prints req/s, both ratios and CPU
# per request for each size, and a 304 beside a 200 (WRK_ROUNDS rounds of WRK_DURATION
# each, default 5 and 2s; docs/cdn.md).
# BenchmarkWarmMemory sends each function 3000 invocations of its reads and uploads in
# one process, at the collector's target and at GOGC=100, and prints the peak resident
# set (VmHWM) and the collector's largest heap goal and live heap.
bench: bench-compare ## the request path against its baseline (benchstat), then every benchmark with figures (ns/op, B/op, allocs/op, peak memory, cold starts)
	@bash infra/scripts/tools.sh bench
	$(WITHSTACK) -ephemeral -- sh -c '$(GO) test -run "^$$" -bench . -benchmem -timeout 30m $$($(GO) list ./... | grep -v /infra/tests/smoke) && \
		$(GO) test -run "^$$" -bench ColdStart -benchtime 300x -timeout 30m ./infra/tests/smoke && \
		$(GO) test -run "^$$" -bench WarmMemory -benchtime 3000x -timeout 30m ./infra/tests/smoke'

# The request path's benchmarks, BENCH_COUNT runs of each: the middleware layer by layer
# around the tags read and the cdn's cached avatar (BenchmarkLayers), a database read's
# two guarded calls (BenchmarkRequestCalls), the tags read
# through the Lambda entry (BenchmarkTagsLambda) and traced beside a bare handler
# (BenchmarkTracedTags), the cdn's hot avatar (BenchmarkAvatar). make bench-compare
# writes them to $(BENCH_OUT) and compares them with $(BENCH_BASELINE) through benchstat
# (golang.org/x/perf, a tool dependency in go.mod): each change a percentage with its
# p-value, "~" where the runs cannot tell a change from noise. make bench-baseline
# writes the baseline instead (commit it with the change it measures).
BENCH_COUNT    ?= 6
BENCH_BASELINE ?= docs/bench-path/request-path.txt
BENCH_OUT      ?= $(STACK_DIR)/bench/request-path.txt
PATH_BENCHES := shared/httpapi:^BenchmarkLayers$$:20000x shared/dependency:^BenchmarkRequestCalls$$:200000x \
	shared/tags:^BenchmarkTagsLambda$$:2000x shared/telemetry:^BenchmarkTracedTags$$:1000x shared/cdn:^BenchmarkAvatar$$:2000x
define run_path_benches
	@mkdir -p $(dir $(1))
	$(WITHSTACK) -ephemeral -- sh -c 'for b in $(PATH_BENCHES); do \
		pkg=$${b%%:*}; rest=$${b#*:}; $(GO) test -run "^$$" -bench "$${rest%:*}" -benchtime $${rest##*:} -benchmem \
			-count $(BENCH_COUNT) -timeout 30m ./$$pkg || exit 1; done' | tee $(1).tmp
	@grep -qE '^(Benchmark|ok)' $(1).tmp && mv $(1).tmp $(1)
endef
bench-compare: ## the request path's benchmarks against the committed baseline, through benchstat
	$(call run_path_benches,$(BENCH_OUT))
	$(GO) tool benchstat $(BENCH_BASELINE) $(BENCH_OUT)
bench-baseline: ## rewrite the request path's baseline ($(BENCH_BASELINE)) from this machine's runs
	$(call run_path_benches,$(BENCH_BASELINE))

# The request path's ratios under wrk, each pair interleaved over BENCH_PATH_ROUNDS
# rounds of BENCH_PATH_DURATION (infra/bench/cmd/benchpath; docs/performance.md): make run's
# server (on BENCH_PATH_PORT, traced on BENCH_PATH_TRACED_PORT) beside a bare net/http +
# pgx handler for GET /tags, untraced and with every span exported to an OTLP sink, and
# beside a trivial server with the same bytes and headers for the cdn's cached avatar,
# scaled and high (both references on BENCH_PATH_REF_PORT).
BENCH_PATH_PORT        ?= 3700
BENCH_PATH_REF_PORT    ?= 3701
BENCH_PATH_TRACED_PORT ?= 3702
BENCH_PATH_ROUNDS   ?= 9
BENCH_PATH_DURATION ?= 4s
# A folder: CPU profiles of the tags read, the untraced and traced services' and the bare handler's,
# and of the scaled avatar, the service's and the trivial server's, taken after the rounds
# (BENCH_PATH_ROUNDS=0: profiles only).
BENCH_PATH_PROFILE  ?=
# An earlier commit: its make run server (on BENCH_PATH_BEFORE_PORT, with today's servers'
# environment) against today's in rounds of their own pairs, the tags read and the default
# avatar, and beside the bare handler.
# BENCH_PATH_BEFORE_ENV: KEY=VALUE pairs for that server's environment alone (with
# BENCH_PATH_BEFORE=HEAD, one setting against today's: BENCH_PATH_BEFORE_ENV=GOGC=100).
BENCH_PATH_BEFORE      ?=
BENCH_PATH_BEFORE_PORT ?= 3703
BENCH_PATH_BEFORE_ENV  ?=
bench-path: ## the tags read and the cached avatar against bare servers under wrk, interleaved rounds, each ratio's median with its interval against the goal
	@bash infra/scripts/tools.sh bench
	$(WITHSTACK) -ephemeral -- $(GO) run ./infra/bench/cmd/benchpath -port $(BENCH_PATH_PORT) \
		-reference-port $(BENCH_PATH_REF_PORT) -traced-port $(BENCH_PATH_TRACED_PORT) -rounds $(BENCH_PATH_ROUNDS) -duration $(BENCH_PATH_DURATION) \
		$(if $(BENCH_PATH_PROFILE),-profile $(BENCH_PATH_PROFILE)) \
		$(if $(BENCH_PATH_BEFORE),-before $(BENCH_PATH_BEFORE) -before-port $(BENCH_PATH_BEFORE_PORT) -before-env '$(BENCH_PATH_BEFORE_ENV)')

# The catalog at scale: seeds a 10k and a 1M catalog once, each in its own
# stack folder under $(SCALE_DIR) (kept for later runs), serves the API on $(BENCH_PORT)
# and reports p50/p95/p99 per route at both sizes and the growth of p95. Not in make test.
SCALE_DIR  ?= .scale
BENCH_PORT ?= 3500
SCALES     ?= 10000 1000000
# PostgreSQL runs with huge pages when the machine can give them (tools.sh hugepages
# reserves them for the run and gives them back at the end).
# Requests per route: BENCH_N warm (after BENCH_N/10 of warm-up), BENCH_FRESH on a fresh
# connection through PgBouncer; BENCH_MATCH keeps the routes whose path or label holds it.
BENCH_N     ?= 200
BENCH_FRESH ?= 50
BENCH_MATCH ?=

bench-scale: ## p50/p95 of every read route and access-checked admin write at 10k and 1M series, warm and through the pooler (seeds once into $(SCALE_DIR))
	@bash infra/scripts/tools.sh scale
	@restore=$$(bash infra/scripts/tools.sh hugepages) && trap "$$restore" EXIT && \
	for n in $(SCALES); do \
		$(WITHSTACK) -dir $(SCALE_DIR)/$$n -- $(GO) run ./infra/bench/cmd/benchscale -scale $$n -port $(BENCH_PORT) \
			-n $(BENCH_N) -fresh $(BENCH_FRESH) -match '$(BENCH_MATCH)' -server-log $(SCALE_DIR)/server-$$n.log \
			-out $(SCALE_DIR)/results-$$n.json || exit 1; \
	done
	@$(GO) run ./infra/bench/cmd/benchscale -report $(foreach n,$(SCALES),$(SCALE_DIR)/results-$(n).json)

# The public catalog through a caching proxy that obeys only the origin's headers
# (nginx, infra/tests/edgecache) in front of the local server, on a generated catalog of
# EDGE_SCALE series; a little over five minutes (it waits for the answers to expire).
EDGE_DIR   ?= .local-edge
EDGE_SCALE ?= 10000
EDGE_PORT  ?= 3600
bench-edge: ## hit ratio against an ideal cache, origin requests, 304s, edge latency and reads served with PostgreSQL stopped, through nginx
	@bash infra/scripts/tools.sh edge
	$(WITHSTACK) -dir $(EDGE_DIR) -- $(GO) run ./infra/bench/cmd/benchedge -scale $(EDGE_SCALE) -port $(EDGE_PORT) -dir $(EDGE_DIR)/bench

# The local server (infra/local/cmd/local, as make run runs it) under a mixed workload for
# SOAK_DURATION, on a stack of its own in $(SOAK_DIR) (made afresh at every run; never
# $(STACK_DIR)), with PostgreSQL frozen at a quarter and restarted at the half: the
# server's RSS, Go heap, goroutines and open files at the start, every minute and at
# the end, the answers by route class and status; it fails on growth over the last
# half beyond the noise, or an unexpected answer outside the faults (infra/bench/soak). make
# test runs a one-minute version (TestShortSoak).
SOAK_DURATION ?= 1h
SOAK_DIR      ?= .soak
SOAK_PORT     ?= 3700
SOAK_RATE     ?= 150
soak: ## the local server under a mixed workload for SOAK_DURATION (default 1h), PostgreSQL frozen and restarted: growth of RSS, goroutines and open files, errors by status
	@bash infra/scripts/tools.sh run
	$(GO) run ./infra/bench/cmd/soak -duration $(SOAK_DURATION) -dir $(SOAK_DIR) -port $(SOAK_PORT) -rate $(SOAK_RATE)

# The template's validators: cfn-lint 1.51 and aws-sam-translator 1.110 (the pair
# `sam validate --lint` runs; python3 -m pip install cfn-lint==1.51.0
# aws-sam-translator==1.110.0). infra/tests/samtemplate's tests run the transform on two
# parameter sets and lint each result, check the resource graph for cycles and the
# transformed template for what the code needs; make test runs them too.
lint: ## gofmt, go vet, squawk over the migrations, cfn-lint and the SAM transform checks of template.yaml
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) test -count=1 -run 'TestSquawk|TestConcurrentBuildsChecked' ./shared/postgres/migrate/
	@command -v cfn-lint >/dev/null && python3 -c 'import samtranslator' 2>/dev/null || { \
		echo "make lint needs cfn-lint and aws-sam-translator (Python 3.11):" >&2; \
		echo "  python3 -m pip install cfn-lint==1.51.0 aws-sam-translator==1.110.0" >&2; exit 2; }
	cfn-lint template.yaml functions/edge/us-east-1.yaml
	$(GO) test -count=1 -short ./infra/tests/samtemplate/

# System tools the tests use, installed when missing (as root, from Debian's packages);
# `make bench` adds libvips' vipsthumbnail, the image benchmark's reference, and vips,
# which makes the progressive JPEG and WebP files of the decoder peak table
# (BenchmarkDecoderPeak, docs/performance.md).
tools:
	@bash infra/scripts/tools.sh test

build: ## the eight bootstrap binaries for linux/arm64 in $(BUILD_DIR)/<function>/
	@for f in $(FUNCTIONS); do \
		echo "build $(BUILD_DIR)/$$f/bootstrap"; \
		$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(BUILD_DIR)/$$f/bootstrap ./functions/$$f || exit 1; \
	done

# sam build (BuildMethod: makefile) calls build-<LogicalId> with ARTIFACTS_DIR set.
build-OAuthFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/oauth
build-TagsFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/tags
build-CdnFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/cdn
build-AdminUsersFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/admin-users
build-AdminRolesFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/admin-roles
build-AdminPermissionsFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/admin-permissions
build-AdminContributorsFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/admin-contributors
build-PublishersFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/publishers
# CodeDeploy's PreTraffic hook of the eight (no route group: not in FUNCTIONS).
build-DeployHookFunction:
	$(LAMBDA_ENV) $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap ./functions/deploy-hook

# The TypeScript client's types, generated from the OpenAPI document with the
# npm-pinned openapi-typescript; commit the result with the change of the document
# (shared/openapi's TestClientTypesCurrent fails until then).
CLIENT_DIR := shared/openapi/client
client: ## regenerate the TypeScript client's types from shared/openapi/openapi.yaml
	@cd $(CLIENT_DIR) && { [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; }
	cd $(CLIENT_DIR) && npm run --silent generate -- --output src/api.d.ts

# What derives from the route tables (each group's Routes in shared/<group>/routes.go)
# and the OpenAPI document: template.yaml's generated regions (each function's events
# with their throttles, its alarms, the CloudFront Functions' code),
# functions/edge/cache-key.js's catalog routes and each route's sample event in
# events/<group>/ (infra/tests/routefacts), then the TypeScript client's types (make
# client), and the span tree of each event (shared/telemetry's testdata, recorded by
# serving the events against the stack). make test fails while any differs.
generate: tools client ## regenerate what derives from the route tables and the OpenAPI document (after adding or changing a route)
	$(GO) test -count=1 -run '^TestGenerated$$' ./infra/tests/routefacts/ -update
	$(WITHSTACK) -ephemeral -- $(GO) test -count=1 -run '^TestRouteSpanTrees$$' ./shared/telemetry/ -update

# shared/postgres/schema.sql, the schema as the migrations leave it, for readers; make
# test fails while it differs from what the migrations make.
schema: ## rewrite shared/postgres/schema.sql from the migrations (after adding one)
	$(GO) test -count=1 -run '^TestSchemaFile$$' ./shared/postgres/migrate/ -update

# docs/operations.md's tables of the AWS calls each function makes and of the requests
# AWS's services make with the roles, from infra/tests/iamcheck's recording; make test fails
# while they differ from it.
iam-table: ## rewrite docs/operations.md's IAM tables from the recorded calls (after a new AWS call)
	$(GO) test -count=1 -run '^TestIAM$$' ./infra/tests/iamcheck/ -update

migrate: ## apply the migrations to DATABASE_URL (operators: before every deploy)
	@test -n "$$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 2; }
	$(GO) run ./infra/ops/cmd/migrate

# The migrations after the previous release's version (REHEARSAL_FROM), applied to a copy
# of a generated catalog of REHEARSAL_SCALE series (generated once into $(SCALE_DIR)/rehearsal)
# while probes run the service's reads and writes; prints each migration's time and the
# probes' longest wait, timeouts and deadlocks. A benchmark, not part of make test.
REHEARSAL_SCALE ?= 1000000
REHEARSAL_FROM  ?= 17
migrate-rehearsal: ## rehearse the pending migrations on a 1M catalog under probes (docs/migrations.md)
	@bash infra/scripts/tools.sh scale
	$(WITHSTACK) -dir $(SCALE_DIR)/rehearsal -- $(GO) run ./infra/bench/cmd/rehearsal -scale $(REHEARSAL_SCALE) -from $(REHEARSAL_FROM)

# A client's whole catalog deleted in batches (infra/ops/bulk): each a short transaction under
# the writers' timeouts, resumable by running it again. Other batched jobs: go run
# ./infra/ops/cmd/bulk update -table <t> -set <sql> -where <sql> (docs/migrations.md).
purge-client: ## delete client CLIENT's catalog from DATABASE_URL in batches (CONFIRM=<the client's name>, which a run without it prints)
	@test -n "$$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 2; }
	@test -n "$(CLIENT)" || { echo "usage: make purge-client CLIENT=<id> CONFIRM=<the client's name>" >&2; exit 2; }
	$(GO) run ./infra/ops/cmd/bulk purge-client -client '$(CLIENT)' -confirm "$$CONFIRM"

# The restore procedure on the local stack (docs/operations.md): a base backup with WAL
# archiving, a workload around a restore point T, a point-in-time recovery into a new
# cluster, restore-revocations and reconcile-images, then the checks, RPO and RTO, at
# each of RESTORE_SCALES series (each primary kept in $(SCALE_DIR)/restore-<n>, its
# catalog generated once). Needs Python's moto (pip install 'moto[server]'), the
# versioned S3 it restores from. Not part of make test (a short run is).
RESTORE_SCALES ?= 10000 1000000
restore-rehearsal: ## rehearse a point-in-time restore, the bucket's reconcile and the sessions' cut-off at 10k and 1M series; prints every check, RPO and RTO
	@bash infra/scripts/tools.sh run
	@for n in $(RESTORE_SCALES); do \
		echo "== make restore-rehearsal at $$n series"; \
		$(GO) run ./infra/bench/cmd/restore-rehearsal -scale $$n -dir $(SCALE_DIR)/restore-$$n || exit 1; \
	done

# After a point-in-time restore of the database (docs/operations.md): every picture a
# restored row names current again, the objects no row names listed (DELETE=1 removes
# them: a delete marker each, recoverable for NoncurrentImageDays). Idempotent; an
# interrupted run is run again.
reconcile-images: ## make the bucket agree with DATABASE_URL after a restore (S3_BUCKET; DELETE=1 removes what no row names)
	@test -n "$$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 2; }
	@test -n "$$S3_BUCKET" || { echo "S3_BUCKET is not set (the stack's ImagesBucketName output)" >&2; exit 2; }
	$(GO) run ./infra/ops/cmd/reconcile-images $(if $(filter 1 true yes,$(DELETE)),-delete)

# After a point-in-time restore, before the service answers from the restored database
# (docs/operations.md): every session issued before refused, the revocations after the
# restore point T made again from the audit records exported from CloudWatch Logs.
restore-revocations: ## end every session of the restored DATABASE_URL and make again the revocations after T=<RFC 3339> that AUDIT=<files> name
	@test -n "$$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 2; }
	@test -n "$(T)" -a -n "$(AUDIT)" || { echo "usage: make restore-revocations T=<restore point, e.g. 2026-12-02T09:30:00Z> AUDIT='<exported audit files>'" >&2; exit 2; }
	$(GO) run ./infra/ops/cmd/restore-revocations -after '$(T)' $(AUDIT)

seed: ## load the demo data; SCALE=N also generates a large catalog for benchmarks
	$(WITHSTACK) -dir $(STACK_DIR) -- sh -c '$(GO) run ./infra/ops/cmd/migrate && $(GO) run ./infra/local/cmd/seed -scale $(SCALE)'

token: ## print a refreshToken cookie value for the user USER_ID against the local stack (last line)
	@test -n "$(USER_ID)" || { echo "usage: make token USER_ID=<id>   (demo users: 1 admin, 2 editor, 3 member)" >&2; exit 2; }
	@if [ -f $(STACK_DIR)/stack.env ]; then \
		set -a; . $(STACK_DIR)/stack.env; set +a; $(GO) run ./infra/local/cmd/token -user-id "$(USER_ID)"; \
	else \
		$(WITHSTACK) -dir $(STACK_DIR) -- env DB_ENV=local $(GO) run ./infra/local/cmd/token -user-id "$(USER_ID)"; \
	fi

# The environments (another file of the same shape for tests and make redeploy), read as
# SAM CLI reads them (infra/ops/samconfig.py).
SAMCONFIG    ?= samconfig.toml
SAMCONFIG_PY := python3 $(CURDIR)/infra/ops/samconfig.py $(abspath $(SAMCONFIG))
# A parameter of ENV's parameter_overrides.
samconfig = $(shell $(SAMCONFIG_PY) get $(ENV) $(1) 2>/dev/null)

# The roles and their passwords come from the proxy's login secrets, by the ARNs of
# ENV in samconfig.toml (or DB_WRITER_SECRET_ARN, DB_READER_SECRET_ARN, DB_CDN_SECRET_ARN).
# ENV is never the default here: the passwords set are the ones its proxy logs in with,
# so another environment's on DATABASE_URL would lock its proxy out of the database.
db_writer_secret = $(or $(DB_WRITER_SECRET_ARN),$(call samconfig,DbWriterSecretArn))
db_reader_secret = $(or $(DB_READER_SECRET_ARN),$(call samconfig,DbReaderSecretArn))
db_cdn_secret    = $(or $(DB_CDN_SECRET_ARN),$(call samconfig,DbCdnSecretArn))
db-roles: ## create the functions' database roles on DATABASE_URL with the passwords of ENV's login secrets (after make migrate)
	@test -n "$$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 2; }
	@case "$(origin ENV)" in command*|environment*) ;; *) echo "make db-roles sets the roles' passwords from one environment's login secrets: name it (make db-roles ENV=<env>)" >&2; exit 2;; esac
	@for arn in '$(db_writer_secret)' '$(db_reader_secret)' '$(db_cdn_secret)'; do case "$$arn" in arn:aws*:secretsmanager:*:secret:*) ;; \
		*) echo "make db-roles ENV=$(ENV): '$$arn' is no secret ARN (fill Db*SecretArn of [$(ENV).deploy.parameters] in $(SAMCONFIG))" >&2; exit 2;; esac; done
	$(GO) run ./infra/ops/cmd/db-roles -writer-secret '$(db_writer_secret)' -reader-secret '$(db_reader_secret)' -cdn-secret '$(db_cdn_secret)'

grant-role: ## give the user USER_ID the role ROLE_ID, by ids (the first admin of a new deployment); FIND=<name> lists the ids
	@if [ -n "$(FIND)" ]; then $(GO) run ./infra/ops/cmd/grant-role -find "$(FIND)"; exit; fi; \
	test -n "$(USER_ID)" -a -n "$(ROLE_ID)" || { echo "usage: make grant-role USER_ID=<id> ROLE_ID=<id>   (make grant-role FIND=<name> lists users and roles with their ids)" >&2; exit 2; }; \
	$(GO) run ./infra/ops/cmd/grant-role -user-id "$(USER_ID)" -role-id "$(ROLE_ID)"

# What is deployed: SRC, a checkout (the work tree; make redeploy passes an older
# release's), with ENV's parameters from SAMCONFIG and DEPLOY_SET's replacements
# (K=V ...; make rollback sets DeploymentType=AllAtOnce).
SRC        ?= .
DEPLOY_SET ?=
# The release: a hash of the commit, the uncommitted changes (untracked files included),
# ENV's parameters and RELEASE_SALT, so that any change publishes a version of every
# function (template.yaml, Release) and deploying the same thing twice is an empty
# change set. RELEASE_SALT=<anything new> forces a release of the same code and
# parameters, e.g. for the functions to read a rotated secret (they read secrets when
# they start).
RELEASE = $(shell cd $(SRC) && { git rev-parse HEAD; git diff HEAD; git ls-files -z --others --exclude-standard | xargs -0 -r sha256sum; \
	$(SAMCONFIG_PY) params $(ENV); echo '$(DEPLOY_SET)' '$(RELEASE_SALT)'; } | sha256sum | cut -c1-10)
# The commit a release is built from, recorded with it; "+dirty" when SRC has changes
# (such a release cannot be deployed again from its commit).
COMMIT = $(shell cd $(SRC) && git rev-parse HEAD)$(shell cd $(SRC) && test -z "$$(git status --porcelain)" || echo +dirty)
# CONFIRM_CHANGESET=false (CI) deploys without asking.
CONFIRM_CHANGESET ?= true
STACK = $(shell $(SAMCONFIG_PY) stack $(ENV))
REGION = $(shell $(SAMCONFIG_PY) region $(ENV))
overrides = $(SAMCONFIG_PY) overrides $(ENV) --template $(SRC)/template.yaml $(foreach s,$(DEPLOY_SET),--set $(s))

# sam deploy --parameter-overrides replaces the file's list, so make deploy passes all of
# ENV's parameters with the Release, one word each as SAM CLI's parser reads them (an
# empty value quoted); samconfig.py refuses placeholders before anything is built. Once
# sam deploy succeeded (every canary passed), the live versions are recorded as a
# release that went live (infra/ops/rollback), what make rollback goes back to, and the
# versions nothing can go back to any more are deleted (Lambda's code storage is finite).
# The database of ENV must be restorable (docs/operations.md): at least 7 days of
# automated backups and deletion protection, read from RDS (infra/ops/cmd/backup-check);
# make deploy checks it before it builds anything.
backup_check = AWS_REGION=$(REGION) $(GO) run ./infra/ops/cmd/backup-check -env $(ENV) \
	-instance '$(call samconfig,DbInstanceIdentifier)' -cluster '$(call samconfig,DbClusterIdentifier)'
backup-check: ## refuse ENV's database unless it keeps 7 days of automated backups and has deletion protection (make deploy runs it)
	@$(backup_check)

deploy: lint ## the lint gate and the backup check, then sam build and sam deploy to ENV (default staging; CONFIRM_CHANGESET=false for CI)
	@$(overrides) >/dev/null
	@$(backup_check)
	cd $(SRC) && sam build --config-env $(ENV) --config-file $(abspath $(SAMCONFIG))
	@set -e; words=$$($(overrides)); mapfile -t words <<<"$$words"; \
	cmd=(sam deploy --config-env $(ENV) --config-file $(abspath $(SAMCONFIG)) --no-fail-on-empty-changeset \
		$(if $(filter false no 0,$(CONFIRM_CHANGESET)),--no-confirm-changeset,--confirm-changeset) \
		--parameter-overrides "$${words[@]}" Release=$(RELEASE)); \
	echo "$${cmd[*]@Q}"; cd $(SRC) && "$${cmd[@]}"
	AWS_REGION=$(REGION) $(GO) run ./infra/ops/cmd/rollback -stack $(STACK) -record $(COMMIT) -release $(RELEASE)

# Every function's live alias back to the last release that went live before the
# current one, in seconds (no build, no canary), then that release's commit deployed
# through CloudFormation all at once (make redeploy), so that the stack, CodeDeploy and
# the aliases agree and the next deploy shifts from it. An interrupted run resumes its
# plan (.rollback/<stack>.json). Older releases: make redeploy VERSION=<tag>.
rollback: ## move every function of ENV back to the last release that went live, then deploy it (AWS credentials in the environment)
	@set -e; commit=$$(AWS_REGION=$(REGION) $(GO) run ./infra/ops/cmd/rollback -stack $(STACK)); \
	case "$$commit" in *+dirty|"") echo "rollback: traffic is back on the previous release, but it was built from uncommitted changes ($$commit): CloudFormation still describes the newer one; deploy a commit of it (make redeploy VERSION=<commit>) before the next make deploy" >&2; exit 1;; esac; \
	echo "rollback: traffic is back on commit $$commit; deploying it through CloudFormation, all at once"; \
	$(MAKE) --no-print-directory redeploy ENV=$(ENV) VERSION=$$commit DEPLOY_SET=DeploymentType=AllAtOnce CONFIRM_CHANGESET=$(CONFIRM_CHANGESET)

# Deploys the release VERSION (a git tag or commit) from a fresh checkout of it, with
# today's tools and ENV's values of today's SAMCONFIG for the parameters its template
# declares; its template passes cfn-lint before anything is built. The migrations stay
# (they are additive, so the older code runs on the newer schema).
redeploy: ## deploy an earlier release again: make redeploy ENV=<env> VERSION=<tag> (the canary judges it)
	@test -n "$(VERSION)" || { echo "usage: make redeploy ENV=<env> VERSION=<git tag>" >&2; exit 2; }
	git worktree prune
	dir=$$(mktemp -d) && git worktree add --detach "$$dir/src" "$(VERSION)" && \
	{ cfn-lint "$$dir/src/template.yaml" && $(MAKE) --no-print-directory -o lint deploy ENV=$(ENV) SRC="$$dir/src" \
		SAMCONFIG=$(abspath $(SAMCONFIG)) DEPLOY_SET='$(DEPLOY_SET)' CONFIRM_CHANGESET=$(CONFIRM_CHANGESET); status=$$?; \
	  git worktree remove --force "$$dir/src"; rm -rf "$$dir"; exit $$status; }

clean: ## remove build output (keeps the local stack's data in $(STACK_DIR))
	rm -rf $(BUILD_DIR) .aws-sam
