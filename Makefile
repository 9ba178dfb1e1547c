# The README's two commands are `make demo` and `make test`; .ci/run calls `make test`.
GO          ?= go
BIN         := $(CURDIR)/bin
GOBIN_DIR   := $(shell $(GO) env GOPATH)/bin
OCB_VERSION := v0.165.0
OCB         := $(GOBIN_DIR)/builder
OTELCOL     := $(BIN)/otelcol-sentry

.PHONY: test vet lint generate otelcol otelcol-compare demo gateway oldrelay quota hugeheaders load soak compare compare-protocol fuzz bench sink spanstream

## test: vet, gofmt check, every package's tests under the race detector (the CI command), then the
## conformance, loadtest and deploy modules'. Everything is built once, with -race: `go vet -race` runs every
## analyzer on the same files (no file here has a race build tag) and compiles the dependencies the -race
## tests then reuse, so the test runs skip go test's own vet subset (-vet=off). The four modules select the
## same version of every package they share (TestModulesBuildSharedPackagesAlike), so the three others
## reuse the root's compiled packages and vet facts instead of building their own copies.
RACE_TESTS = $(GO) test -race -vet=off -count=1 -timeout 15m -p 3 -ldflags='-s -w' ./internal/translate/ . ./internal/send/ ./...
test: vet
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	@# go test starts test runs in the order the packages are listed and counts each against -p, as it does
	@# compiles: the longest runs come first, and a third slot lets a compile go on while two of them wait
	@# (internal/send's TestHostileAnswers runs 45 s for 20 s of CPU).
	@# -s -w: the 36 test binaries are linked without a symbol table or DWARF (panics and race reports
	@# still name functions and lines, from the pclntab); ~7 CPU-s of linking.
	@# The deploy module shares little with the root (its own graph is k8s, kustomize and prometheus):
	@# it is built and tested beside the root's race run, filling the cores that run's waiting tests
	@# leave idle, its output held in a file and printed when it ends.
	@log=$$(mktemp); $(MAKE) --no-print-directory deploy-test >"$$log" 2>&1 & deploy=$$!; \
	  status=0; \
	  echo "$(RACE_TESTS)"; $(RACE_TESTS) || status=1; \
	  (cd conformance && $(GO) vet -race ./... && $(GO) test -race -vet=off -count=1 ./...) || status=1; \
	  (cd loadtest && $(GO) vet -race ./... && $(GO) test -race -vet=off -count=1 ./...) || status=1; \
	  wait $$deploy || status=1; echo "== the deploy module (make deploy-test):"; cat "$$log"; rm -f "$$log"; \
	  exit $$status

vet:
	$(GO) vet -race ./...

## test-cold: `make test` as a newcomer first runs it: in a fresh clone of HEAD, with an empty build cache
## (the module cache stays: downloading is the network's time, not the build's). Prints the wall time and
## fails past TEST_COLD_LIMIT seconds (6 min; on 2 cores, docs/architecture.md#tests).
TEST_COLD_LIMIT ?= 360
.PHONY: test-cold
test-cold:
	@dir=$$(mktemp -d); trap 'chmod -R u+w "$$dir"; rm -rf "$$dir"' EXIT; \
	git clone -q "$(CURDIR)" "$$dir/src" && cd "$$dir/src" && start=$$(date +%s) && \
	GOCACHE="$$dir/gocache" $(MAKE) --no-print-directory test && \
	took=$$(( $$(date +%s) - start )) && \
	echo "make test from a fresh clone with an empty build cache: $$took s on $$(nproc) cores (limit $(TEST_COLD_LIMIT) s)" && \
	[ "$$took" -le "$(TEST_COLD_LIMIT)" ]

## lint: golangci-lint (the version tools/go.mod pins, built into bin/) with .golangci.yml, contrib's
## linters and settings, over this module and the conformance/ and loadtest/ modules. tools/ holds
## no Go code of its own, only the tools' pins. Every module is linted, then the target fails if any had a finding.
GOLANGCI_LINT := $(BIN)/golangci-lint
$(GOLANGCI_LINT): tools/go.mod tools/go.sum
	cd tools && $(GO) build -o $(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint
lint: $(GOLANGCI_LINT)
	@status=0; \
	$(GOLANGCI_LINT) run ./... || status=1; \
	(cd conformance && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...) || status=1; \
	(cd loadtest && $(GOLANGCI_LINT) run --config ../.golangci.yml ./...) || status=1; \
	exit $$status

## generate: regenerate internal/metadata* and the lifecycle tests from metadata.yaml (mdatagen v0.159.0 from ./tools).
## mdatagen names the package after the folder, so it runs on a copy in a folder named sentryexporter.
## (v0.165.0, the collector release ocb builds, is not served by this project's module proxy, nor is
## v0.161.0's internal/schemagen: tools/go.mod stays at v0.159.0 until they are.)
generate:
	rm -rf $(CURDIR)/.gen && mkdir -p $(CURDIR)/.gen/sentryexporter
	cp metadata.yaml doc.go go.mod go.sum $(CURDIR)/.gen/sentryexporter/
	cd tools && $(GO) tool mdatagen $(CURDIR)/.gen/sentryexporter/metadata.yaml
	cd $(CURDIR)/.gen/sentryexporter && cp -r generated_*.go documentation.md internal $(CURDIR)/
	rm -rf $(CURDIR)/.gen

$(OCB):
	$(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

## otelcol: build bin/otelcol-sentry with ocb from builder-config.yaml. Static (CGO_ENABLED=0), so
## that the same binary runs on this machine and in the scratch image (make image).
otelcol: $(OTELCOL)
$(OTELCOL): $(OCB) builder-config.yaml $(shell find . -name '*.go' -not -path './dist*' -not -path './.gen/*' -not -path './cmd/*' -not -path './deploy/*' -not -name '*_test.go') go.mod go.sum
	CGO_ENABLED=0 $(OCB) --config builder-config.yaml
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

## gateway: five services through the built collector, routed to four projects (one over its error quota, one hung; one service unroutable) and checked;
## then two basicauth tenants bound to their projects (testdata/gateway-tenants.yaml), one spoofing the other's service.name.
gateway: otelcol sink
	./scripts/gateway.sh

## quota: a trace_metric_byte quota (429s from the sink) on one service's traces, logs and metrics through the
## built collector: only the trace metrics stop, the rest flows at full rate, the reports come on time (~40 s).
quota: otelcol sink
	./scripts/quota.sh

## oldrelay: the zstd -> gzip fallback through the built collector, against a sink that decodes as a Relay from before zstd.
oldrelay: otelcol sink
	./scripts/oldrelay.sh

## hugeheaders: 100 projects at 3,000 spans/s for 20 s to a receiver that answers 32 MiB of headers, at the defaults,
## with `headers:`, at `detailed` telemetry and over HTTP/2 with TLS; peak RSS <= 512 MiB each, flat after the traffic.
hugeheaders: otelcol sink
	./scripts/hugeheaders.sh

## spotlight: the exporter's data as Sentry shows it, in Spotlight (npm, pinned in scripts/spotlight/): starts it and
## the collector at the exporter's defaults, sends a minute of the demo's traffic, prints the URL; Ctrl-C stops both.
## spotlight-check: the same through Spotlight's own parser, asserted against what was sent (SCREENSHOT_DIR=docs
## also saves the README's screenshots, by headless Chromium).
.PHONY: spotlight spotlight-check
spotlight: otelcol sink
	./scripts/spotlight.sh
spotlight-check: otelcol sink
	./scripts/spotlight-check.sh

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

## compare-protocol: the protocol's price apart from the exporter's, over TLS (COMPARE_TLS=0: plain;
## five rounds, ~12 minutes; not in CI). The peers are otlphttp sending what Sentry's protocol
## makes one request: a trace (one transaction per envelope), 100 log records (what Relay is built
## for in one envelope), zstd. Fails when this exporter's median CPU per span is above 1.05x the
## trace peer's (transactions) or 1.1x (traces_as: spans), or its CPU per log record, exception
## records making no error events, above 1.05x the log peer's or above the batched otlphttp's.
compare-protocol: otelcol-compare sink
	$(GO) build -o $(BIN)/otlpsink ./cmd/otlpsink
	COMPARE_TLS=$${COMPARE_TLS:-1} COMPARE_RATE=$${COMPARE_RATE:-4000} COMPARE_THROUGHPUT=0 \
	COMPARE_ROUNDS=$${COMPARE_ROUNDS:-5} \
	COMPARE_MODES="sentry sentry-spans otlphttp-pertrace otlphttp sentry-logs-noerrors otlphttp-logs-per100 otlphttp-logs" \
	COMPARE_CHECK="sentry/otlphttp-pertrace<=1.05 sentry-spans/otlphttp-pertrace<=1.1 sentry-logs-noerrors/otlphttp-logs-per100<=1.05 sentry-logs-noerrors/otlphttp-logs<=1.0" \
	./scripts/compare.sh

## fuzz: the fuzzers (the parsers and the JSON string writer), FUZZTIME each (default 1m).
FUZZTIME ?= 1m
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./ratelimit/
	$(GO) test -run='^$$' -fuzz='^FuzzParseRetryAfter$$' -fuzztime=$(FUZZTIME) ./ratelimit/
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./envelope/
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./internal/stacktrace/
	$(GO) test -run='^$$' -fuzz='^FuzzParseAlloc$$' -fuzztime=$(FUZZTIME) ./internal/stacktrace/
	$(GO) test -run='^$$' -fuzz='^FuzzAppend$$' -fuzztime=$(FUZZTIME) ./internal/jsonstr/

## mutate: mutation testing of ratelimit, internal/account, internal/assemble, internal/gate, internal/concurrency, internal/membudget and
## internal/send (docs/mutations.md): gremlins, then cmd/mutantcheck for the mutants gremlins
## reports NOT COVERED (case clauses), with a watchdog on the test binaries' memory
## (scripts/mutate.sh). About 20 minutes on 2 cores (internal/send is most of it); not in CI.
## Reports in bin/mutate/. One package: make mutate MUTATE_PKGS=internal/gate
MUTATE_PKGS  ?= ratelimit internal/account internal/assemble internal/gate internal/concurrency internal/membudget internal/send
.PHONY: mutate
mutate:
	MUTATE_PKGS="$(MUTATE_PKGS)" GO="$(GO)" ./scripts/mutate.sh

## bench: the benchmarks quoted in the README.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=5 ./... | tee bench.out

## spanstream: span v2 held against @sentry/node 11.12's streamed spans for one node:http program
## (conformance/spanstream_test.go; also part of `make test` once conformance/node has node_modules).
spanstream:
	npm ci --prefix conformance/node --no-audit --no-fund
	cd conformance && SPANSTREAM_REQUIRED=1 $(GO) test -race -count=1 -run 'TestSpanStreaming|TestNodeMetrics' -v .

## profiles-conformance: a profile chunk held against @sentry/profiling-node 11.1.0's real one, field by
## field, and the profiler link of the streamed segment and of the transaction (contexts.profile)
## (conformance/profiles_conformance_test.go; also part of
## `make test` once conformance/profiling-node has node_modules).
profiles-conformance:
	npm ci --prefix conformance/profiling-node --no-audit --no-fund
	cd conformance && PROFILES_CONFORMANCE_REQUIRED=1 $(GO) test -race -count=1 -run 'Profile' -v .

.PHONY: profiles-conformance

## metrics-conformance: trace metrics held against sentry-go's metrics API, the same measurements
## through the OTel Go SDK at its defaults and the built collector (conformance/metrics_*_test.go;
## part of `make test` too, where it is skipped until bin/otelcol-sentry is built).
metrics-conformance: otelcol
	cd conformance && COLLECTOR_REQUIRED=1 $(GO) test -race -count=1 -run 'Metric' -v .

.PHONY: sdkapp sdktraffic otelcol-front scaleout metrics-conformance

## sdkapp: bin/sdkapp and bin/sdkcheck, the real-SDK load program and its checker (loadtest/, a module of its own).
sdkapp:
	cd loadtest && $(GO) build -o $(BIN)/sdkapp ./sdkapp && $(GO) build -o $(BIN)/sdkcheck ./sdkcheck

## profiles-real: a real Go program's CPU profile (pprof, aggregated) and the CPU samples of its
## execution trace (timestamped), scraped from its /debug/pprof as pprofreceiver would, through the
## built collector's profiles pipeline into the sink (loadtest/profilesreal; docs/profiles.md).
profiles-real: otelcol sink
	cd loadtest && $(GO) build -o $(BIN)/profilesreal ./profilesreal
	./scripts/profiles-real.sh

.PHONY: profiles-real

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

## image: the gateway's container image (Containerfile: scratch, the static bin/otelcol-sentry, CA
## certificates, deploy/kubernetes/collector.yaml as the default config) with podman or docker.
## IMAGE=registry.example.com/otelcol-sentry:0.1.0 names it (default otelcol-sentry:<dist.version>).
## image-smoke: builds and runs it against the local sink (health, traffic, SIGTERM); skips with a
## message where no container runtime works (IMAGE_SMOKE_REQUIRED=1 fails instead).
## rules-test: promtool checks the alert rules and their tests (deploy/alerts; also in make test).
## deploy-test: the deploy/ module's tests (manifests, config validation, rules, dashboard; in make test).
## They skip what needs bin/otelcol-sentry or promtool when absent; DEPLOY_REQUIRED=1 (CI) fails instead.
.PHONY: image image-smoke rules-test deploy-test
image: otelcol
	./scripts/image.sh
image-smoke: otelcol sink
	./scripts/image-smoke.sh
rules-test:
	cd deploy && $(GO) test -count=1 -run 'TestPromtool|TestEveryAlert|TestAlertRules|TestMemoryAlert' -v .
deploy-test:
	cd deploy && $(GO) vet -race ./... && $(GO) test -race -vet=off -count=1 ./...

## Issue 19's faults through the built collector, each held long enough to reach its plateau
## (docs/faults.md; each script's head names its *_DURATION and other variables):
## brownout: one project, 20 % of requests answered 503, 1,000 spans/s for 20 s: stored % at the load's end, +10 s, +120 s.
## partition: 100 projects all hung, then all black-holed, 3 min each at 3,000 spans/s, then both with ~8 MB/s of
## items near Relay's limits (otlpgen --large): peak RSS, RSS slope, all counted.
## heal: one project hung for 30 s, then healthy, 1,000 spans/s for 90 s: stored keeps up within 5 s of the heal.
## flap: Sentry 10 s up / 10 s hung for 6 min, 100 projects at 3,000 spans/s: RSS slope over the last two minutes, peak RSS, all counted.
## chaos: 10 runs of 10 projects for 10 s against random resets, 503s and 429s: in = stored + dropped, exactly.
## faults: all five (about 21 minutes when they pass), failing at the end if any failed.
## status: the exporter's component status through the health endpoint while one project's Sentry
## answers 401, then 503, then 200 (scripts/status.sh; about 2 minutes).
.PHONY: brownout partition heal flap chaos faults status crash
## crash: the collector with a persistent queue (file_storage) killed with SIGKILL at random moments
## under mixed traffic, Sentry up, hung and refusing in turn, restarted each time: every acknowledged
## item stored at least once or counted, duplicates reported (scripts/crash.sh; docs/durability.md).
crash: otelcol sink
	./scripts/crash.sh
status: otelcol sink
	./scripts/status.sh
brownout: otelcol sink
	./scripts/brownout.sh
partition: otelcol sink
	./scripts/partition.sh
heal: otelcol sink
	./scripts/heal.sh
flap: otelcol sink
	./scripts/flap.sh
chaos: otelcol sink
	./scripts/chaos.sh
faults: otelcol sink
	@failed=""; for s in brownout partition heal flap chaos; do ./scripts/$$s.sh || failed="$$failed $$s"; done; \
	  if [ -n "$$failed" ]; then echo "fault checks failed:$$failed"; exit 1; fi

## ocb-user: the README's install section verbatim: a user's own manifest (testdata/ocb-user/manifest.yaml,
## this exporter at its release version beside core and contrib components at v0.165.0) built by ocb from a
## folder holding it and a checkout of this repository at ./sentryexporter (the manifest's `replaces`),
## then the binary validates testdata/ocb-user/config.yaml. Its work folder .ocb-user/ is removed first.
.PHONY: ocb-user
ocb-user: $(OCB)
	rm -rf $(CURDIR)/.ocb-user && mkdir -p $(CURDIR)/.ocb-user
	cp testdata/ocb-user/manifest.yaml testdata/ocb-user/config.yaml $(CURDIR)/.ocb-user/
	ln -s $(CURDIR) $(CURDIR)/.ocb-user/sentryexporter
	cd $(CURDIR)/.ocb-user && CGO_ENABLED=0 $(OCB) --config manifest.yaml
	cd $(CURDIR)/.ocb-user && SENTRY_DSN=https://public@sentry.example.com/1 ./dist/otelcol-custom validate --config config.yaml
	rm -rf $(CURDIR)/.ocb-user
