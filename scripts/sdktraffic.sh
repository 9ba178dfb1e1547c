#!/usr/bin/env bash
# make sdktraffic: the real OpenTelemetry Go SDK, at its defaults, through the built
# collector (docs/sdk-traffic.md). loadtest/sdkapp runs three services, each with its own
# TracerProvider (default batch span processor: every 5 s or 512 spans) and
# LoggerProvider (default batch log processor) over OTLP/HTTP. A request is a server span
# with nine sequential ~10 ms child spans, so the SDK's exports split the requests in
# flight (children in one OTLP request, their root in a later one); every 20th request
# fails (the exception recorded on the span and logged with trace context); every 50th
# holds its root open 4 s after its last child (children, then their root seconds later).
# It sends through bin/otelcol-sentry (otlp receiver, `batch` processor at its defaults)
# to the local sink, once with `traces_as: transactions` and once with
# `traces_as: spans`, and loadtest/sdkcheck checks from what the sink stored
# (sentrysink --record-file) and the collector's own counters (its final export at
# shutdown) that:
#   - there is one transaction per request (within 1 %), holding all nine children, and
#     no transaction of a child; in span mode one segment span per request (its root) and
#     every span carrying its root's sentry.segment.id;
#   - the split requests are complete;
#   - every span, log and error event is stored once; one error event per exception, on
#     its span, with its request's transaction;
#   - per category, spans and logs accepted = sent_items + dropped_items, sent_items =
#     what the sink stored, and every exception's second rendering counted deduplicated.
# Exits non-zero on the first run with a failed check. Everything listens on 127.0.0.1.
#
# Environment: SDK_DURATION (10s), SDK_RATE (requests/s, 100), SDK_MODES
# ("transactions spans"), SDK_TOLERANCE (0.01), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=sdklib.sh
source "$(dirname "${BASH_SOURCE[0]}")/sdklib.sh"

DURATION=${SDK_DURATION:-10s}
RATE=${SDK_RATE:-100}
MODES=${SDK_MODES:-transactions spans}
TOLERANCE=${SDK_TOLERANCE:-0.01}

for b in "$OTELCOL" "$SINK" "$SDKAPP" "$SDKCHECK"; do
	[[ -x "$b" ]] || die "$b is missing; run 'make sdktraffic'"
done
make_workdir sdktraffic
install_trap

failed_modes=()
for mode in $MODES; do
	d="$WORKDIR/$mode"
	mkdir -p "$d"
	log "=== traces_as: $mode"
	start sink "$d/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$d/sink.addr" --quiet --stats-every 0 \
		--summary-file "$d/sink.json" --record-file "$d/records.jsonl"
	wait_addr_file "$d/sink.addr" "$PID_sink" "$d/sink.log"
	sink_pid=$PID_sink
	sink_addr=$(<"$d/sink.addr")
	read -r GRPC_PORT HTTP_PORT METRICS_PORT <<<"$(free_ports 3)"
	sentry_replica_config "$d/collector.yaml" "$GRPC_PORT" "$HTTP_PORT" "$METRICS_PORT" "http://public@$sink_addr/1" "$mode"
	start_split collector "$d/collector" "$OTELCOL" --config "$d/collector.yaml"
	wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $d/collector.log)" 60
	wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30

	log "sdkapp: $RATE requests/s for $DURATION"
	timeout 120 "$SDKAPP" --endpoint "127.0.0.1:$HTTP_PORT" --rate "$RATE" --duration "$DURATION" --services 3 \
		--exception-every 20 --slow-every 50 --slow-tail 4s --async-every 10 --async-delay 7s --summary-file "$d/app.json" 2>&1 | tee "$d/app.log" >&2 ||
		die "sdkapp failed (see $d/app.log)"

	wait_drained "$METRICS_PORT" "$d/sink.json" 60
	scrape "$METRICS_PORT" "$d/metrics.prom"
	stop_pid "$PID_collector" 30
	stop_pid "$sink_pid" 10
	[[ "$("$SINK" --query "$d/sink.json" invalid_envelopes)" == 0 ]] ||
		die "the sink saw invalid envelopes: $("$SINK" --query "$d/sink.json" last_invalid)"

	echo
	echo "=== traces_as: $mode"
	if ! "$SDKCHECK" --app "$d/app.json" --records "$d/records.jsonl" --mode "$mode" --tolerance "$TOLERANCE" \
		--collector "otelcol-sentry=$(final_metrics "$d/collector.out" "$d/metrics.prom")"; then
		failed_modes+=("$mode")
	fi
	echo
done

if ((${#failed_modes[@]} > 0)); then
	log "FAIL: real-SDK traffic through the collector: checks failed with traces_as: ${failed_modes[*]} (logs in $WORKDIR)"
	exit 1
fi
log "OK: real-SDK traffic: one transaction (segment) per request with all its children, every item stored once or counted, one error event per exception ($MODES)"
