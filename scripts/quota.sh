#!/usr/bin/env bash
# make quota: a byte quota on one signal through the built collector (issue 40). One service
# sends traces (with exceptions), logs and metrics each second; its Sentry (the sink) answers
# every trace_metric envelope 429 with
#   X-Sentry-Rate-Limits: 60:trace_metric_byte:organization:quota_exceeded
# as Relay does to an organisation over its trace-metrics byte quota, and stores the rest.
# It checks, from otlpgen's totals, the sink's totals and the exporter's counters, that:
#   - every span, log and error reached the sink, and transactions arrived in every second
#     of the traffic (the other signals at full rate);
#   - no trace metric was stored, and each was counted (rate_limited or ratelimit_backoff),
#     in trace_metric and, in bytes, trace_metric_byte;
#   - the exporter never limited all categories (rate_limit_remaining{category="all"});
#   - the client reports carry exactly the local drops, the first within the report interval
#     of the first 429 (it rides on the next envelope);
#   - no envelope was invalid.
# Prints the measured figures. Everything listens on 127.0.0.1 only.
#
# Environment: QUOTA_DURATION (20s), QUOTA_RATE (spans/s, 100), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${QUOTA_DURATION:-20s}
RATE=${QUOTA_RATE:-100}
LIMIT="60:trace_metric_byte:organization:quota_exceeded"
REPORT_S=30 # client_reports.interval, the default

need_binaries
make_workdir quota
install_trap

# 1. the sink: the byte quota on trace metrics; a timeline of what it stored each second
start sink "$WORKDIR/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink.addr" \
	--quiet --stats-every 0 --summary-file "$WORKDIR/sink.json" --timeline-file "$WORKDIR/sink.tl" \
	--rate-limit "$LIMIT"
wait_addr_file "$WORKDIR/sink.addr" "$PID_sink" "$WORKDIR/sink.log"
SINK_ADDR=$(<"$WORKDIR/sink.addr")

# 2. the collector at the exporter's defaults (client reports every 30 s)
read -r GRPC_PORT HTTP_PORT METRICS_PORT <<<"$(free_ports 3)"
write_collector_config "$WORKDIR/collector.yaml" "$GRPC_PORT" "$HTTP_PORT" "$METRICS_PORT" "${SINK_ADDR##*:}"
start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml"
wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30

# 3. traffic; meanwhile, when the first 429 and the first client report arrive, and whether
# the exporter ever limits all categories
log "sending $DURATION of traffic ($RATE spans/s, logs, metrics each second), trace metrics over their byte quota"
start gen "$WORKDIR/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP_PORT" --duration "$DURATION" --rate "$RATE" \
	--services 1 --logs-per-trace 2 --exception-ratio 0.1 --workers 1 --batch 50 --quiet \
	--metrics-interval 1s --summary-file "$WORKDIR/gen.json"
first_429_ms=0 first_report_ms=0 all_limited=0 byte_limited=0
now_ms() { echo $(($(date +%s%N) / 1000000)); }
while kill -0 "$PID_gen" 2>/dev/null; do
	if ((first_429_ms == 0)) && (($("$SINK" --query "$WORKDIR/sink.json" rate_limited_envelopes 2>/dev/null || echo 0) > 0)); then
		first_429_ms=$(now_ms)
	fi
	if ((first_report_ms == 0 && first_429_ms > 0)) &&
		[[ "$("$SINK" --query "$WORKDIR/sink.json" client_report_discarded.ratelimit_backoff/trace_metric 2>/dev/null || echo 0)" =~ ^[1-9] ]]; then
		first_report_ms=$(now_ms)
	fi
	scrape "$METRICS_PORT" "$WORKDIR/during.prom"
	grep -q 'otelcol_exporter_sentry_rate_limit_remaining{[^}]*category="all"' "$WORKDIR/during.prom" && all_limited=1
	grep -q 'otelcol_exporter_sentry_rate_limit_remaining{[^}]*category="trace_metric_byte"' "$WORKDIR/during.prom" && byte_limited=1
	sleep 0.2
done
wait "$PID_gen" || log "otlpgen reported failures"
forget_pid "$PID_gen"
cat "$WORKDIR/gen.log"

# 4. drain, scrape, stop (the final client report goes out at shutdown)
wait_drained "$METRICS_PORT" "$WORKDIR/sink.json" 30
scrape "$METRICS_PORT" "$WORKDIR/metrics.prom"
stop_pid "$PID_collector" 30
stop_pid "$PID_sink" 10

# 5. checks
M="$WORKDIR/metrics.prom"
failures=0
check() { # check WHAT GOT WANT
	if [[ "$2" == "$3" ]]; then
		printf '  ok    %-62s %s\n' "$1" "$2"
	else
		printf '  FAIL  %-62s got %s, want %s\n' "$1" "$2" "$3"
		failures=$((failures + 1))
	fi
}
gen() { "$SINK" --query "$WORKDIR/gen.json" "$1"; }
sink() { "$SINK" --query "$WORKDIR/sink.json" "$1"; }
dropped() { metric_sum "$M" otelcol_exporter_sentry_dropped_items "$@"; }
[[ "$(gen http_errors)" == "{}" ]] || die "otlpgen had failed requests: see $WORKDIR/gen.log"

# Seconds of the timeline from the first to the last with any transaction: each must have some.
read -r tl_seconds tl_gaps tx_min tx_max < <(awk '!/^#/ && $4 > 0 { s[n++] = $1; t[$1] = $4 }
	END { gaps = 0; min = -1; max = 0
		for (x = s[0] + 1; x < s[n - 1]; x++) { if (!(x in t)) gaps++; else { if (min < 0 || t[x] < min) min = t[x]; if (t[x] > max) max = t[x] } }
		print (n ? s[n - 1] - s[0] + 1 : 0), gaps, min, max }' "$WORKDIR/sink.tl")
tm_limited=$(dropped 'category="trace_metric"' 'reason="rate_limited"')
tm_backoff=$(dropped 'category="trace_metric"' 'reason="ratelimit_backoff"')
tmb_backoff=$(dropped 'category="trace_metric_byte"' 'reason="ratelimit_backoff"')
latency_ms=$((first_report_ms > 0 ? first_report_ms - first_429_ms : -1))

echo
echo "=== the other signals at full rate"
check "invalid envelopes" "$(sink invalid_envelopes)" 0
check "spans stored = spans sent" "$(sink spans)" "$(gen spans)"
check "logs stored = logs sent" "$(sink logs)" "$(gen logs)"
check "errors stored = exceptions sent" "$(sink errors)" "$(gen exceptions)"
check "seconds with no transaction stored, inside the traffic" "$tl_gaps" 0
check "spans, logs, errors dropped" "$(($(dropped 'category="span"') + $(dropped 'category="log_item"') + $(dropped 'category="error"')))" 0
check "never all categories limited (rate_limit_remaining)" "$all_limited" 0
echo "=== trace metrics over their byte quota: dropped and counted"
check "trace_metric_byte limit seen (rate_limit_remaining)" "$byte_limited" 1
check "trace metrics stored" "$(sink trace_metrics)" 0
check "trace metrics rate_limited + ratelimit_backoff = items made" "$((tm_limited + tm_backoff))" "$(gen trace_metric_items)"
check "trace_metric_byte counted with them" "$(((tmb_backoff > 0) == (tm_backoff > 0) ? 1 : 0))" 1
check "client reports: trace_metric = local drops" "$(sink client_report_discarded.ratelimit_backoff/trace_metric)" "$tm_backoff"
check "client reports: trace_metric_byte = local drops" "$(sink client_report_discarded.ratelimit_backoff/trace_metric_byte)" "$tmb_backoff"
check "first client report within ${REPORT_S}s of the first 429" "$((latency_ms >= 0 && latency_ms <= REPORT_S * 1000 ? 1 : 0))" 1
echo
log "measured: transactions stored in each of $tl_seconds s: $tx_min..$tx_max; $(gen trace_metric_items) trace metrics dropped ($tm_limited rate_limited, $tm_backoff ratelimit_backoff, $tmb_backoff bytes); first client report ${latency_ms} ms after the first 429"

if ((failures > 0)); then
	log "FAIL: $failures checks failed (logs in $WORKDIR)"
	exit 1
fi
log "OK: a byte quota on trace metrics stopped only trace metrics; spans, logs and errors flowed at full rate; reports came on time"
