# otelcol-ttft — see README.md. Two commands matter on a fresh machine:
#   make run    build the distribution and run it on the bundled config and sample data
#   make test   every test, the end-to-end ones included

GO      ?= go
DIST    := dist/otelcol-ttft
# The benchmark's second distribution: contrib spanmetrics in place of our connector
# (and the ttft_floor components of the floor pipeline).
SPANMETRICS_DIST := dist/spanmetrics/otelcol-ttft-spanmetrics
# Everything the binary is built from; make skips ocb when none of it changed.
SOURCES := $(shell find . -name '*.go' -not -path './dist/*' -not -path './bench/*' -not -path './instrumentation/*' -not -name '*_test.go') \
           go.mod go.sum builder-config.yaml
PKGS    := ./...
FUZZTIME ?= 20s

.PHONY: all build run test unit e2e bench bench-e2e fuzz lint fmt prometheus clean instrumentation-test

all: build

build: $(DIST)

$(DIST): $(SOURCES)
	$(GO) tool builder --config builder-config.yaml
	@touch $@

## run: build, then run the collector on the default config and the bundled sample export
run: build
	./scripts/run.sh

## test: lint, unit tests with -race, and the end-to-end tests against the built binaries (and the benchmark's
## second distribution, for its smoke run) and a real Prometheus
test: lint build $(SPANMETRICS_DIST) prometheus
	TTFT_E2E=1 OTELCOL_TTFT_BIN=$(CURDIR)/$(DIST) $(GO) test -race -count=1 -timeout 30m $(PKGS)
	cd bench && $(GO) vet ./... && TTFT_E2E=1 OTELCOL_TTFT_BIN=$(CURDIR)/$(DIST) \
		OTELCOL_TTFT_SPANMETRICS_BIN=$(CURDIR)/$(SPANMETRICS_DIST) $(GO) test -count=1 ./...
	cd test/promreceiver && $(GO) vet ./... && $(GO) test -count=1 ./...
	$(MAKE) instrumentation-test

## instrumentation-test: the app-side packages in instrumentation/: the Go module and its SDK test
## module (vet, -race; real SDKs against a fake LLM, spans to the built binary), the npm package
INSTR_ENV := TTFT_E2E=1 OTELCOL_TTFT_BIN=$(CURDIR)/$(DIST)
instrumentation-test: build
	cd instrumentation/go && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd instrumentation/go/sdktest && $(GO) vet ./... && $(INSTR_ENV) $(GO) test -race -count=1 ./...
	cd instrumentation/js && npm ci --no-audit --no-fund && $(INSTR_ENV) npm test

unit:
	$(GO) test -race -count=1 $(PKGS)

e2e: build prometheus
	TTFT_E2E=1 OTELCOL_TTFT_BIN=$(CURDIR)/$(DIST) $(GO) test -count=1 -v ./e2e/...

## prometheus: install Debian's prometheus package when it is missing (the e2e tests run it on loopback)
prometheus:
	./scripts/ensure-prometheus.sh

## bench: every benchmark with allocations, including the spanmetrics comparison module
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=5 $(PKGS)
	cd bench && $(GO) test -run='^$$' -bench=. -benchmem -count=5 ./...
	cd instrumentation/go && $(GO) test -run='^$$' -bench=. -benchmem -count=5 ./...
	cd instrumentation/go/sdktest && $(GO) test -run='^$$' -bench=. -benchmem -count=5 ./...

# The variant also carries the floor pipeline's ttft_floor components (bench/floor).
FLOOR_SOURCES := $(shell find bench/floor -name '*.go' -not -name '*_test.go') bench/go.mod bench/go.sum
$(SPANMETRICS_DIST): $(SOURCES) $(FLOOR_SOURCES) bench/builder-spanmetrics.yaml
	$(GO) tool builder --config bench/builder-spanmetrics.yaml
	@touch $@

## bench-e2e: collector CPU seconds per million spans, end to end, of three pipelines at three mixes
## (a measurement, not part of make test; e.g. BENCH_E2E_FLAGS="-reps 7 -rate 5000")
bench-e2e: build $(SPANMETRICS_DIST)
	cd bench && $(GO) run ./cmd/bench-e2e -collector $(CURDIR)/$(DIST) -spanmetrics $(CURDIR)/$(SPANMETRICS_DIST) $(BENCH_E2E_FLAGS)

## fuzz: each fuzz target for FUZZTIME (short by default; FUZZTIME=5m for a real run)
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(find . -name '*.go' -not -path './dist/*' -not -path '*/node_modules/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(find . -name '*.go' -not -path './dist/*' -not -path '*/node_modules/*')

clean:
	rm -rf dist .run
