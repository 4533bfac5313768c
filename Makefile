# orderflow — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
TEST_FLAGS ?= -race -count=1 -timeout 14m

.PHONY: help run run-mysql demo test lint build test-cluster test-ha browser chaos chaos-short audit bench bench-ha bench-console bench-statements fuzz

## help: list every target with what it does (the default goal: plain `make` runs it)
help:
	@echo 'orderflow: make <target>   (a newcomer needs two: make run, make test)'
	@awk '/^## [a-z-]+: / { t = $$2; sub(/:$$/, "", t); d = $$0; sub(/^## [a-z-]+: /, "", d); printf "  %-13s %s\n", t, d }' $(MAKEFILE_LIST)

## run: everything in one process on SQLite + an embedded Redis, nothing to install (ARGS=… passes flags)
run:
	$(GO) run ./cmd/orderflow dev $(ARGS)

## run-mysql: the production shape: migrations + simulator + worker/scheduler + API against local MariaDB/Redis
run-mysql:
	./scripts/run.sh

## demo: a fresh embedded system and a short story through its API, printed
demo:
	$(GO) run ./cmd/orderflow demo

## test: lint, then the fast tier (unit, integration, fault tests) against real MariaDB and Redis (~13 min)
test: lint
	./scripts/services.sh
	$(GO) test $(TEST_FLAGS) ./...

## lint: gofmt check, go vet, golangci-lint at GOLANGCI_LINT_VERSION with .golangci.yaml, the OpenAPI document's lint
# `go run …@version` builds that exact release without touching go.mod; the first run downloads
# and compiles it (minutes on 2 cores), later runs start from the build cache.
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...
	$(GO) run ./cmd/apilint

## build: the api, queue, paysim and orderflow binaries into bin/
build:
	$(GO) build -o bin/ ./api ./queue ./cmd/paysim ./cmd/orderflow

## bench: floor vs end-to-end (on loopback and 1 ms away), close burst, group settle, RSS/CPU, growth (1,000,000 orders pre-loaded), ledger audit (< 10 min; see docs/performance.md)
BENCH_FLAGS ?=
bench:
	./scripts/services.sh
	$(GO) run ./cmd/bench $(BENCH_FLAGS)

## bench-ha: the end-to-end closed loop on the single MariaDB, then on a private 3-node Galera cluster, in one run (docs/ha.md)
bench-ha:
	./scripts/ha-packages.sh
	./scripts/services.sh
	$(GO) run ./cmd/bench -phases e2e,galera -half-time 0 -json tmp/bench-ha.json $(BENCH_FLAGS)

## bench-statements: a paysim statement day of 20,000 and of 200,000 lines (breaks planted) reconciled in-process: time (< 60 s), breaks, peak RSS
STATEMENT_LINES ?= 20000,200000
bench-statements:
	./scripts/services.sh
	$(GO) run ./cmd/bench -statements $(STATEMENT_LINES) $(BENCH_FLAGS)

## bench-console: each console page timed over HTTP with 100,000 orders in the ledger (must be < 200 ms)
bench-console:
	./scripts/services.sh
	$(GO) test -count=1 -run '^$$' -bench '^BenchmarkConsolePages$$' -benchtime 20x -timeout 20m ./tests/console/

## chaos: the full chaos suite (own MariaDB + Redis, faults on a seeded schedule, ledger audit; < 6 min; PROVIDER=alipay pays through the Alipay fake)
SEED ?= 42
PROVIDER ?= paysim
chaos: build
	$(GO) run ./cmd/chaos -seed $(SEED) -provider $(PROVIDER) -bin bin

## chaos-short: the fast-tier chaos run (< 2 min; also run by `go test ./tests/chaos/`)
chaos-short: build
	$(GO) run ./cmd/chaos -short -seed $(SEED) -bin bin

## audit: audit a ledger at rest (AUDIT_FLAGS='-dsn … -redis … -paysim …')
audit:
	$(GO) run ./cmd/audit $(AUDIT_FLAGS)

## test-cluster: the end-to-end activation on a private 3-master Redis Cluster (heavy; build tag cluster)
test-cluster:
	./scripts/services.sh
	$(GO) test -race -tags cluster -count=1 -timeout 10m -v ./tests/operations/ -run Cluster

## test-ha: Galera + Redis Sentinel: the ha-tagged tests, then the chaos run on them at SEED (installs galera-4 etc. if missing; ~5 min)
test-ha: build
	./scripts/ha-packages.sh
	$(GO) test -race -tags ha -count=1 -timeout 10m -v ./tests/ha/
	$(GO) run ./cmd/chaos -ha -seed $(SEED) -bin bin

## browser: headless Chromium checks the asynqmon dashboard and drives the console (tmp/monitoring.png, tmp/console-*.png)
browser:
	./scripts/browser-check.sh
	$(GO) test -race -count=1 -tags browser -run '^TestConsole(Roles|Statements)?InBrowser$$' -v ./tests/console/

## fuzz: the request-decoder and payment-notify fuzzers, FUZZTIME each (default 60s); `make test` runs their seeds
FUZZTIME ?= 60s
fuzz:
	./scripts/services.sh
	$(GO) test -run '^$$' -fuzz '^FuzzRequestBodies$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./api/handler/
	$(GO) test -run '^$$' -fuzz '^FuzzPaymentNotify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./api/handler/
