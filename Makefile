# The README's two commands are `make demo` and `make test`; .ci/run calls `make test`.
GO          ?= go
BIN         := $(CURDIR)/bin
GOBIN_DIR   := $(shell $(GO) env GOPATH)/bin
OCB_VERSION := v0.165.0
OCB         := $(GOBIN_DIR)/builder
OTELCOL     := $(BIN)/otelcol-sentry

.PHONY: test vet generate otelcol otelcol-compare demo gateway oldrelay load soak compare fuzz bench sink

## test: vet, gofmt check, and every package's tests under the race detector (the CI command).
test: vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) test -race -count=1 -timeout 15m ./...
	cd conformance && $(GO) vet ./... && $(GO) test -race -count=1 ./...

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
OTELCOL_COMPARE := $(BIN)/otelcol-compare
otelcol-compare: $(OTELCOL_COMPARE)
$(OTELCOL_COMPARE): $(OCB) builder-compare.yaml $(shell find . -name '*.go' -not -path './dist*' -not -path './.gen/*' -not -path './cmd/*' -not -name '*_test.go') go.mod go.sum
	$(OCB) --config builder-compare.yaml
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

## bounds: the memory bound (docs/memory.md) through the built collector, RSS from /proc:
## 100 projects all hung, all black-holed, one hung among 99 healthy, all healthy, and
## a 1-project peer (about 4 minutes; BOUNDS_* variables: scripts/bounds.sh).
.PHONY: bounds
bounds: otelcol sink
	./scripts/bounds.sh
