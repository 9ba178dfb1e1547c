#!/usr/bin/env bash
# make spotlight-check: the exporter at its defaults (zstd first, no compression setting;
# `traces_as: transactions`) into Spotlight, read back through Spotlight's own parser
# (`spotlight tail all -f json`). Sends SPOTLIGHT_CHECK_DURATION (10s) of the demo's traffic
# and fails unless (scripts/spotlight/check.mjs) every trace, one error per exception and
# every log are shown, each error and log is linked to a trace that is shown, the fields are
# as the official SDKs fill them, every profile chunk of otlpgen's CPU profiles (one per
# service every SPOTLIGHT_CHECK_PROFILES_INTERVAL, 2s) reaches Spotlight's UI as it takes one
# (read from the sidecar's stream, scripts/spotlight/stream.mjs: the tail prints no
# profiles) and is joined to shown transactions of its process by profiler_id, the project
# fell back to gzip once (Spotlight answers 500 to zstd), and nothing was dropped. SCREENSHOT_DIR=dir also saves the Traces and Errors
# pages there (headless Chromium, scripts/spotlight/screenshot.mjs). Everything listens on 127.0.0.1 but Spotlight (every
# interface, see spotlightlib.sh).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=spotlightlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/spotlightlib.sh"

export COLLECTOR_PROFILES=1 # the profiles pipeline (scripts/lib.sh)
began=$SECONDS
need_binaries
install_spotlight
make_workdir spotlight-check
install_trap

read -r PORT GRPC HTTP METRICS <<<"$(free_ports 4)"
start_spotlight "$PORT" "$WORKDIR/spotlight.log"

# Spotlight's parser, fed by its /stream; ready once it shows a marker event.
start tail "$WORKDIR/tail.jsonl" "${SPOTLIGHT_ENV[@]}" "$SPOTLIGHT" tail all --format json --port "$PORT"
# what the sidecar streams to its UI, profile chunks included (the tail prints none)
start stream "$WORKDIR/stream.log" node "$SPOTLIGHT_DIR/stream.mjs" "$PORT" "$WORKDIR/stream.jsonl"
for ((i = 0; i < 60; i++)); do
	node "$SPOTLIGHT_DIR/check.mjs" marker "http://127.0.0.1:$PORT/api/1/envelope/"
	sleep 1
	grep -q '"message":"spotlight-check marker"' "$WORKDIR/tail.jsonl" && break
	kill -0 "$PID_tail" 2>/dev/null || die "spotlight tail exited: $(cat "$WORKDIR/tail.jsonl")"
done
grep -q 'spotlight-check marker' "$WORKDIR/tail.jsonl" || die "spotlight tail showed nothing within 60 s"

start_spotlight_collector "$PORT" "$GRPC" "$HTTP" "$METRICS"
"$GEN" --endpoint "127.0.0.1:$HTTP" --duration "${SPOTLIGHT_CHECK_DURATION:-10s}" --rate "${SPOTLIGHT_CHECK_RATE:-40}" \
	--services 3 --logs-per-trace 2 --exception-ratio 0.2 --workers 1 --batch 20 --quiet \
	--profiles-interval "${SPOTLIGHT_CHECK_PROFILES_INTERVAL:-2s}" --summary-file "$WORKDIR/gen.json" | tail -n 1

# Until everything sent is shown (the first zstd bodies wait for their retry), 120 s at most.
for ((i = 0; i < 120; i++)); do
	node "$SPOTLIGHT_DIR/check.mjs" complete "$WORKDIR/tail.jsonl" "$WORKDIR/gen.json" "$WORKDIR/stream.jsonl" && break
	sleep 1
done
scrape "$METRICS" "$WORKDIR/metrics.prom"
if [[ -n "${SCREENSHOT_DIR:-}" ]]; then # headless Chromium (Debian: apt-get install -y chromium)
	mkdir -p "$SCREENSHOT_DIR"
	node "$SPOTLIGHT_DIR/screenshot.mjs" "http://localhost:$PORT/telemetry/traces" "$SCREENSHOT_DIR/spotlight-traces.png" txns
	node "$SPOTLIGHT_DIR/screenshot.mjs" "http://localhost:$PORT/telemetry/errors" "$SCREENSHOT_DIR/spotlight-errors.png" CardDeclined
	# 64 colours (Debian's pngquant): a third of the size, the same to the eye
	if command -v pngquant >/dev/null; then pngquant --force --ext .png 64 "$SCREENSHOT_DIR"/spotlight-{traces,errors}.png; fi
fi

fallbacks=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_compression_fallbacks)
dropped=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_dropped_items)
grep -E 'refused zstd-compressed' "$WORKDIR/collector.log" | cut -c1-400 >&2 || true
node "$SPOTLIGHT_DIR/check.mjs" check "$WORKDIR/tail.jsonl" "$WORKDIR/gen.json" "$WORKDIR/stream.jsonl"
[[ "$fallbacks" == 1 ]] || die "compression_fallbacks is $fallbacks, want 1 (Spotlight answers 500 to zstd)"
[[ "$dropped" == 0 ]] || die "the exporter dropped $dropped items"
log "OK: Spotlight showed everything at the exporter's defaults (gzip fallback counted once) in $((SECONDS - began)) s"
