# The README's two commands are `make demo` and `make test`; .ci/run calls `make test`.
GO          ?= go
BIN         := $(CURDIR)/bin
GOBIN_DIR   := $(shell $(GO) env GOPATH)/bin
OCB_VERSION := v0.165.0
OCB         := $(GOBIN_DIR)/builder
OTELCOL     := $(BIN)/otelcol-sentry

.PHONY: test vet generate otelcol otelcol-compare demo gateway oldrelay load soak compare fuzz bench sink spanstream

## test: vet, gofmt check, and every package's tests under the race detector (the CI command).
test: vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -race -count=1 -timeout 15m ./...
	cd conformance && $(GO) vet ./... && $(GO) test -race -count=1 ./...
	cd loadtest && $(GO) vet ./... && $(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

## generate: regenerate internal/metadata* and the lifecycle tests from metadata.yaml (mdatagen v0.159.0 from ./tools).
## mdatagen names the package after the folder, so it runs on a copy in a folder named sentryexporter.
generate:
	rm -rf $(CURDIR)/.gen && mkdir -p $(CURDIR)/.gen/sentryexporter
	cp metadata.yaml doc.go go.mod go.sum $(CURDIR)/.gen/sentryexporter/
	cd tools && $(GO) tool mdatagen $(CURDIR)/.gen/sentryexporter/metadata.yaml
	cd $(CURDIR)/.gen/sentryexporter && cp -r generated_*.go documentation.md internal $(CURDIR)/
	rm -rf $(CURDIR)/.gen

$(OCB):
	$(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

## otelcol: build bin/otelcol-sentry with ocb from builder-config.yaml.
otelcol: $(OTELCOL)
$(OTELCOL): $(OCB) builder-config.yaml $(shell find . -name '*.go' -not -path './dist*' -not -path './.gen/*' -not -path './cmd/*' -not -name '*_test.go') go.mod go.sum
	$(OCB) --config builder-config.yaml
	@mkdir -p $(BIN)
	cp dist/otelcol-sentry $(OTELCOL)

## otelcol-compare: bin/otelcol-compare, this exporter and the stock otlphttp exporter (and pprof) in one collector.
## Its symbols are kept (ocb strips them by default) so that perf can name functions (COMPARE_PERF).
OTELCOL_COMPARE := $(BIN)/otelcol-compare
otelcol-compare: $(OTELCOL_COMPARE)
$(OTELCOL_COMPARE): $(OCB) builder-compare.yaml $(shell find . -name '*.go' -not -path './dist*' -not -path './.gen/*' -not -path './cmd/*' -not -name '*_test.go') go.mod go.sum
	$(OCB) --config builder-compare.yaml --ldflags=
	@mkdir -p $(BIN)
	cp dist-compare/otelcol-compare $(OTELCOL_COMPARE)

sink:
	$(GO) build -o $(BIN)/sentrysink ./cmd/sentrysink
	$(GO) build -o $(BIN)/otlpgen ./cmd/otlpgen

## demo: build the collector, start the local Sentry sink, send a minute of traffic, print what arrived.
demo: otelcol sink
	./scripts/demo.sh

## gateway: four services through the built collector, routed to three projects (one over its error quota) and checked.
gateway: otelcol sink
	./scripts/gateway.sh

## oldrelay: the zstd -> gzip fallback through the built collector, against a sink that decodes as a Relay from before zstd.
oldrelay: otelcol sink
	./scripts/oldrelay.sh

## load: envelopes/s through the built collector to a sink that answers after 50 ms.
load: otelcol sink
	./scripts/load.sh

## soak: several minutes per scenario (all-category limit, slow Sentry, no limit), RSS/heap/queue every 10 s.
soak: otelcol sink
	./scripts/soak.sh

## compare: CPU and wire bytes per span and per log record, this exporter against otlphttp in one
## collector, medians of alternating runs (a few minutes; not in CI). COMPARE_* variables: scripts/compare.sh.
compare: otelcol-compare sink
	$(GO) build -o $(BIN)/otlpsink ./cmd/otlpsink
	./scripts/compare.sh

## fuzz: the fuzzers (the parsers and the JSON string writer), FUZZTIME each (default 1m).
FUZZTIME ?= 1m
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./ratelimit/
	$(GO) test -run='^$$' -fuzz='^FuzzParseRetryAfter$$' -fuzztime=$(FUZZTIME) ./ratelimit/
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./envelope/
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./internal/stacktrace/
	$(GO) test -run='^$$' -fuzz='^FuzzAppend$$' -fuzztime=$(FUZZTIME) ./internal/jsonstr/

## bench: the benchmarks quoted in the README.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=5 ./... | tee bench.out

## spanstream: span v2 held against @sentry/node 11.12's streamed spans for one node:http program
## (conformance/spanstream_test.go; also part of `make test` once conformance/node has node_modules).
spanstream:
	npm ci --prefix conformance/node --no-audit --no-fund
	cd conformance && SPANSTREAM_REQUIRED=1 $(GO) test -race -count=1 -run 'TestSpanStreaming' -v .

.PHONY: sdkapp sdktraffic otelcol-front scaleout

## sdkapp: bin/sdkapp and bin/sdkcheck, the real-SDK load program and its checker (loadtest/, a module of its own).
sdkapp:
	cd loadtest && $(GO) build -o $(BIN)/sdkapp ./sdkapp && $(GO) build -o $(BIN)/sdkcheck ./sdkcheck

## sdktraffic: the real OpenTelemetry Go SDK at its defaults through the built collector, in both traces_as
## modes: one transaction (segment) per request with all its children, every item stored once or counted.
sdktraffic: otelcol sink sdkapp
	./scripts/sdktraffic.sh

## otelcol-front: bin/otelcol-front, the scale-out check's front collector (otlp receiver, contrib loadbalancing
## exporter v0.161.0), built by ocb v0.161.0 from builder-scaleout.yaml (docs/scale-out.md).
OCB_FRONT_VERSION := v0.161.0
OCB_FRONT         := $(BIN)/ocb-$(OCB_FRONT_VERSION)
OTELCOL_FRONT     := $(BIN)/otelcol-front
$(OCB_FRONT):
	@mkdir -p $(BIN)/.ocb-front
	GOBIN=$(BIN)/.ocb-front $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_FRONT_VERSION)
	mv $(BIN)/.ocb-front/builder $(OCB_FRONT)
otelcol-front: $(OTELCOL_FRONT)
$(OTELCOL_FRONT): $(OCB_FRONT) builder-scaleout.yaml
	$(OCB_FRONT) --config builder-scaleout.yaml
	@mkdir -p $(BIN)
	cp dist-scaleout/otelcol-front $(OTELCOL_FRONT)

## scaleout: a loadbalancing front in front of two otelcol-sentry replicas, real-SDK load, then one replica
## stopped with SIGTERM mid-run: every item stored once or counted (docs/scale-out.md).
scaleout: otelcol otelcol-front sink sdkapp
	./scripts/scaleout.sh
## bounds: the memory bound (docs/memory.md) through the built collector, RSS from /proc:
## 100 projects all hung, all black-holed, one hung among 99 healthy, all healthy, and
## a 1-project peer (about 4 minutes; BOUNDS_* variables: scripts/bounds.sh).
.PHONY: bounds
bounds: otelcol sink
	./scripts/bounds.sh
