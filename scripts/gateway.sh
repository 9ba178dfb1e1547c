#!/usr/bin/env bash
# make gateway: the gateway case end to end through the built collector. Four services
# send through one collector; three of them are routed by service.name to three Sentry
# projects, each a sink of its own; the fourth has no entry (and there is no `dsn`).
#   checkout  -> project 11
#   inventory -> project 12
#   payments  -> project 13, over its error quota (the sink answers 429 with
#                X-Sentry-Rate-Limits: 60:error:organization to envelopes holding errors)
#   checkout-2 -> no project: counted as unroutable
# Then it checks, from otlpgen's totals by service, the sinks' totals by project and the
# exporter's own counters, that:
#   - each project received exactly its own service's spans, logs and errors;
#   - the error quota on project 13 dropped (and counted) its errors and nothing else,
#     and touched neither of the other projects;
#   - the client reports to project 13 carry exactly its local drops;
#   - the unroutable service's spans, logs and errors were all counted, none sent;
#   - no sink saw an invalid envelope.
# Exits non-zero on the first difference. Everything listens on 127.0.0.1 only.
#
# Environment: GATEWAY_DURATION (20s), GATEWAY_RATE (spans/s, 300), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${GATEWAY_DURATION:-20s}
RATE=${GATEWAY_RATE:-300}
SERVICES=(checkout inventory payments)
declare -A PROJECT=([checkout]=11 [inventory]=12 [payments]=13)
LIMITED=payments
UNROUTED=checkout-2

need_binaries
make_workdir gateway
install_trap

# 1. one sink per project
declare -A PORT
SINK_PIDS=()
for svc in "${SERVICES[@]}"; do
	p=${PROJECT[$svc]}
	limit=()
	[[ "$svc" != "$LIMITED" ]] || limit=(--rate-limit "60:error:organization")
	start sink "$WORKDIR/sink-$p.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink-$p.addr" \
		--quiet --stats-every 0 --summary-file "$WORKDIR/sink-$p.json" "${limit[@]}"
	wait_addr_file "$WORKDIR/sink-$p.addr" "$PID_sink" "$WORKDIR/sink-$p.log"
	SINK_PIDS+=("$PID_sink")
	addr=$(<"$WORKDIR/sink-$p.addr")
	PORT[$svc]=${addr##*:}
done

# 2. the collector: routing table, no default dsn
read -r GRPC_PORT HTTP_PORT METRICS_PORT <<<"$(free_ports 3)"
routes=""
for svc in "${SERVICES[@]}"; do
	routes+="    $svc: http://public@127.0.0.1:${PORT[$svc]}/${PROJECT[$svc]}"$'\n'
done
write_collector_config "$WORKDIR/collector.yaml" "$GRPC_PORT" "$HTTP_PORT" "$METRICS_PORT" "" "
routing:
  attribute: service.name
  dsns:
$routes
client_reports:
  enabled: true
  interval: 2s"
start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml"
wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30

# 3. traffic from four services
log "sending $DURATION of traffic ($RATE spans/s) from ${SERVICES[*]} and $UNROUTED"
start gen "$WORKDIR/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP_PORT" --duration "$DURATION" --rate "$RATE" \
	--services 4 --logs-per-trace 2 --exception-ratio 0.1 --workers 2 --batch 100 --quiet \
	--summary-file "$WORKDIR/gen.json"
wait "$PID_gen" || log "otlpgen reported failures"
forget_pid "$PID_gen"
cat "$WORKDIR/gen.log"

# 4. drain, scrape, stop (the collector flushes its last client reports on shutdown, the
# sinks write their final totals on exit)
wait_drained "$METRICS_PORT" "$WORKDIR/sink-${PROJECT[checkout]}.json" 60
scrape "$METRICS_PORT" "$WORKDIR/metrics.prom"
stop_pid "$PID_collector" 30
for pid in "${SINK_PIDS[@]}"; do
	stop_pid "$pid" 10
done

# 5. checks
M="$WORKDIR/metrics.prom"
failures=0
check() { # check WHAT GOT WANT
	if [[ "$2" == "$3" ]]; then
		printf '  ok    %-58s %s\n' "$1" "$2"
	else
		printf '  FAIL  %-58s got %s, want %s\n' "$1" "$2" "$3"
		failures=$((failures + 1))
	fi
}
gen() { "$SINK" --query "$WORKDIR/gen.json" "by_service.$1.$2"; }
sink() { "$SINK" --query "$WORKDIR/sink-${PROJECT[$1]}.json" "$2"; }
dropped() { # dropped PROJECT [LABEL_FILTER...]
	local p=$1
	shift
	metric_sum "$M" otelcol_exporter_sentry_dropped_items "project=\"$p\"" "$@"
}

[[ "$("$SINK" --query "$WORKDIR/gen.json" http_errors)" == "{}" ]] || die "otlpgen had failed requests: see $WORKDIR/gen.log"
echo
echo "=== each project received exactly its own service's data"
for svc in "${SERVICES[@]}"; do
	p=${PROJECT[$svc]}
	check "project $p: invalid envelopes" "$(sink "$svc" invalid_envelopes)" 0
	check "project $p: spans sent by $svc" "$(sink "$svc" by_project."$p".spans)" "$(gen "$svc" spans)"
	check "project $p: logs sent by $svc" "$(sink "$svc" by_project."$p".logs)" "$(gen "$svc" logs)"
	if [[ "$svc" != "$LIMITED" ]]; then
		check "project $p: errors = exceptions sent by $svc" "$(sink "$svc" by_project."$p".errors)" "$(gen "$svc" exceptions)"
		check "project $p: nothing dropped" "$(dropped "$p")" 0
	fi
done

p=${PROJECT[$LIMITED]}
echo "=== project $p over its error quota: errors dropped and counted, nothing else"
rate_limited=$(dropped "$p" 'category="error"' 'reason="rate_limited"')
backoff=$(dropped "$p" 'category="error"' 'reason="ratelimit_backoff"')
check "project $p: errors stored" "$(sink "$LIMITED" by_project."$p".errors)" 0
check "project $p: errors rate_limited + ratelimit_backoff" "$((rate_limited + backoff))" "$(gen "$LIMITED" exceptions)"
check "project $p: rate_limited = events the sink answered 429" "$rate_limited" "$(sink "$LIMITED" rate_limited_items.event)"
check "project $p: client reports = local drops" "$(sink "$LIMITED" by_project."$p".client_report_discarded.ratelimit_backoff/error)" "$backoff"
check "project $p: spans and logs dropped" "$(($(dropped "$p" 'category="span"') + $(dropped "$p" 'category="log_item"')))" 0
if ((rate_limited < 1)); then
	check "project $p: at least one error met the 429" "$rate_limited" ">= 1"
fi

echo "=== $UNROUTED has no route and there is no dsn: counted, never sent"
u='project="unroutable"'
check "$UNROUTED: spans counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="span"' 'reason="unroutable"')" "$(gen "$UNROUTED" spans)"
check "$UNROUTED: logs counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="log_item"' 'reason="unroutable"')" "$(gen "$UNROUTED" logs)"
check "$UNROUTED: errors counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="error"' 'reason="unroutable"')" "$(gen "$UNROUTED" exceptions)"
echo

if ((failures > 0)); then
	log "FAIL: $failures checks failed (logs in $WORKDIR)"
	exit 1
fi
log "OK: three projects got exactly their own data; the error quota on one touched only its errors; the unroutable service was counted"
