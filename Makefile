# orderflow — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
TEST_FLAGS ?= -race -count=1 -timeout 14m

.PHONY: run test lint build

## run: migrations + payment simulator + worker/scheduler + API against local MariaDB/Redis
run:
	./scripts/run.sh

## test: the fast tier (unit, integration, fault tests) against real MariaDB and Redis
test: lint
	./scripts/services.sh
	$(GO) test $(TEST_FLAGS) ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

build:
	$(GO) build -o bin/ ./api ./queue ./cmd/paysim
