#!/usr/bin/env bash
# make demo: a local Sentry sink, the collector with the Sentry exporter, and DEMO_DURATION
# (default 60s) of OTLP traffic from otlpgen; then what arrived at the sink and the
# exporter's own otelcol_exporter_sentry_* metrics. Exits non-zero if the sink saw an
# invalid envelope or nothing arrived. Everything listens on 127.0.0.1 only.
#
# Environment: DEMO_DURATION (60s), DEMO_RATE (spans/s, 500), DEMO_LOGS_PER_TRACE (2),
# DEMO_EXCEPTION_RATIO (0.05), DEMO_TRACES_AS (transactions|spans), DEMO_METRICS_INTERVAL (1s:
# every service's metrics, all six OTLP kinds, as an SDK exports them), DEMO_PROFILES_INTERVAL
# (5s: every service's CPU profile, as the OpenTelemetry eBPF profiler exports it, through the
# collector's profiles pipeline; 0 for none), KEEP_WORKDIR=1 to keep the logs and configs.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${DEMO_DURATION:-60s}
RATE=${DEMO_RATE:-500}
PROFILES_INTERVAL=${DEMO_PROFILES_INTERVAL:-5s}
[[ "$PROFILES_INTERVAL" == 0 ]] || export COLLECTOR_PROFILES=1

need_binaries
make_workdir demo
install_trap

# 1. the sink, on a port it picks itself
start sink "$WORKDIR/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink.addr" \
	--stats-every 10s --summary-file "$WORKDIR/sink.json"
wait_addr_file "$WORKDIR/sink.addr" "$PID_sink" "$WORKDIR/sink.log"
SINK_ADDR=$(<"$WORKDIR/sink.addr")
SINK_PORT=${SINK_ADDR##*:}

# 2. the collector
read -r GRPC_PORT HTTP_PORT METRICS_PORT <<<"$(free_ports 3)"
write_collector_config "$WORKDIR/collector.yaml" "$GRPC_PORT" "$HTTP_PORT" "$METRICS_PORT" "$SINK_PORT" "
traces_as: ${DEMO_TRACES_AS:-transactions}
client_reports:
  enabled: true
  interval: 5s"
# shellcheck disable=SC2046 # profiles_gate is one word or none
start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml" $(profiles_gate)
wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30
log "sink http://$SINK_ADDR  collector otlp grpc :$GRPC_PORT http :$HTTP_PORT  metrics :$METRICS_PORT"

# 3. traffic
log "sending $DURATION of traffic ($RATE spans/s)"
start gen "$WORKDIR/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP_PORT" --duration "$DURATION" --rate "$RATE" \
	--services 3 --logs-per-trace "${DEMO_LOGS_PER_TRACE:-2}" --exception-ratio "${DEMO_EXCEPTION_RATIO:-0.05}" \
	--workers 2 --batch 100 --metrics-interval "${DEMO_METRICS_INTERVAL:-1s}" --profiles-interval "$PROFILES_INTERVAL" --summary-file "$WORKDIR/gen.json"
# wait, not a foreground run: a signal to this script then runs the cleanup trap at once
wait "$PID_gen" || log "otlpgen reported failures"
forget_pid "$PID_gen"
cat "$WORKDIR/gen.log"

# 4. drain, scrape, stop
log "waiting for the exporter queue to drain"
wait_drained "$METRICS_PORT" "$WORKDIR/sink.json" 60
nap 6 # one more client report interval
scrape "$METRICS_PORT" "$WORKDIR/metrics.prom"
stop_pid "$PID_collector" 30
stop_pid "$PID_sink" 10

echo
echo "=== otlpgen sent"
tail -n 1 "$WORKDIR/gen.log"
echo
echo "=== sentrysink received"
"$SINK" --print-summary "$WORKDIR/sink.json"
echo
echo "=== collector: otelcol_exporter_sentry_* metrics"
metric_lines "$WORKDIR/metrics.prom" 'otelcol_exporter_sentry_' | sed 's/^/  /'
echo "=== collector: exporterhelper metrics"
metric_lines "$WORKDIR/metrics.prom" 'otelcol_exporter_(sent|send_failed|enqueue_failed)_' | sed 's/^/  /'
if grep -Eq '"level":"(error|warn)"|	(error|warn)	' "$WORKDIR/collector.log"; then
	echo "=== collector warnings and errors (first 10)"
	grep -E '"level":"(error|warn)"|	(error|warn)	' "$WORKDIR/collector.log" | head -n 10 | cut -c1-400 | sed 's/^/  /'
fi
echo

read -r ENVELOPES INVALID SPANS LOGS METRICS <<<"$("$SINK" --query "$WORKDIR/sink.json" envelopes invalid_envelopes spans logs trace_metrics)"
if [[ "$INVALID" != 0 ]]; then
	log "FAIL: the sink rejected $INVALID invalid envelopes (last: $("$SINK" --query "$WORKDIR/sink.json" last_invalid))"
	exit 1
fi
if [[ "$ENVELOPES" == 0 || "$SPANS" == 0 ]]; then
	log "FAIL: nothing arrived at the sink (envelopes=$ENVELOPES spans=$SPANS)"
	exit 1
fi
# every trace metric item the points became is stored or counted (docs/mapping.md#metrics--trace-metrics)
M_IN=$("$SINK" --query "$WORKDIR/gen.json" trace_metric_items)
M_DROPPED=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_dropped_items 'category="trace_metric"')
if [[ "$METRICS" == 0 || $((METRICS + M_DROPPED)) != "$M_IN" ]]; then
	log "FAIL: trace metrics: $M_IN items from otlpgen's points, $METRICS stored, $M_DROPPED counted dropped"
	exit 1
fi
# every profile chunk and millisecond the profiles became is stored or counted (docs/mapping.md#profiles)
PROFILES_OK=""
if [[ "$PROFILES_INTERVAL" != 0 ]]; then
	read -r P_IN P_SAMPLES P_MS <<<"$("$SINK" --query "$WORKDIR/gen.json" profile_chunks profile_chunk_samples profile_duration_ms)"
	read -r P_STORED P_STORED_SAMPLES <<<"$("$SINK" --query "$WORKDIR/sink.json" profile_chunks profile_samples)"
	P_DROPPED=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_dropped_items 'category="profile_chunk"')
	P_MS_SENT=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_sent_items 'category="profile_duration"')
	P_MS_DROPPED=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_dropped_items 'category="profile_duration"')
	if [[ "$P_STORED" == 0 || $((P_STORED + P_DROPPED)) != "$P_IN" || $((P_MS_SENT + P_MS_DROPPED)) != "$P_MS" ]]; then
		log "FAIL: profiles: $P_IN chunks ($P_MS ms) from otlpgen's profiles, $P_STORED stored, $P_DROPPED counted dropped; $P_MS_SENT ms sent, $P_MS_DROPPED counted dropped"
		exit 1
	fi
	if [[ "$P_DROPPED" == 0 && "$P_STORED_SAMPLES" != "$P_SAMPLES" ]]; then
		log "FAIL: profiles: $P_STORED_SAMPLES samples stored, the chunks carried $P_SAMPLES"
		exit 1
	fi
	PROFILES_OK=", $P_STORED profile chunks of $P_STORED_SAMPLES samples ($P_MS_SENT ms; + $P_DROPPED counted of $P_IN)"
fi
log "OK: $ENVELOPES envelopes, $SPANS spans, $LOGS logs, $METRICS trace metrics (+ $M_DROPPED counted of $M_IN)$PROFILES_OK, 0 invalid"
