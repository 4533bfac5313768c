# orderflow — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
TEST_FLAGS ?= -race -count=1 -timeout 14m

.PHONY: run run-mysql demo test lint build test-cluster browser chaos chaos-short audit bench fuzz

## run: everything in one process on SQLite + an embedded Redis, nothing to install (ARGS=… passes flags)
run:
	$(GO) run ./cmd/orderflow dev $(ARGS)

## run-mysql: the production shape: migrations + simulator + worker/scheduler + API against local MariaDB/Redis
run-mysql:
	./scripts/run.sh

## demo: a fresh embedded system and a short story through its API, printed
demo:
	$(GO) run ./cmd/orderflow demo

## test: the fast tier (unit, integration, fault tests) against real MariaDB and Redis
test: lint
	./scripts/services.sh
	$(GO) test $(TEST_FLAGS) ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

build:
	$(GO) build -o bin/ ./api ./queue ./cmd/paysim ./cmd/orderflow

## bench: floor vs end-to-end, close burst, group settle, RSS/CPU, ledger audit (< 5 min; see README "Performance")
BENCH_FLAGS ?=
bench:
	./scripts/services.sh
	$(GO) run ./cmd/bench $(BENCH_FLAGS)

## chaos: the full chaos suite (own MariaDB + Redis, faults on a seeded schedule, ledger audit; < 6 min)
SEED ?= 42
chaos: build
	$(GO) run ./cmd/chaos -seed $(SEED) -bin bin

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

## browser: headless Chromium loads the asynqmon dashboard with the admin token; screenshot in tmp/monitoring.png
browser:
	./scripts/browser-check.sh

## fuzz: the request-decoder and payment-notify fuzzers, FUZZTIME each (default 60s); `make test` runs their seeds
FUZZTIME ?= 60s
fuzz:
	./scripts/services.sh
	$(GO) test -run '^$$' -fuzz '^FuzzRequestBodies$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./api/handler/
	$(GO) test -run '^$$' -fuzz '^FuzzPaymentNotify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 5s ./api/handler/
