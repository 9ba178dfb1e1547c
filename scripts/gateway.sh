#!/usr/bin/env bash
# make gateway: the gateway case end to end through the built collector. Five services
# send through one collector; four of them are routed by service.name to four Sentry
# projects, each a sink of its own; the fifth has no entry (and there is no `dsn`).
#   checkout  -> project 11
#   inventory -> project 12
#   payments  -> project 13, over its error quota (the sink answers 429 with
#                X-Sentry-Rate-Limits: 60:error:organization to envelopes holding errors)
#   inventory-2 -> project 14, whose Sentry hangs (the sink reads every envelope and never
#                answers): a hung self-hosted Sentry, a stuck proxy
#   checkout-2 -> no project: counted as unroutable
# Every service also exports its metrics each second (all six OTLP kinds, cumulative), and
# a CPU profile every 2 s (as the OpenTelemetry eBPF profiler does) through the collector's
# profiles pipeline.
# Then it checks, from otlpgen's totals by service, the sinks' totals by project and the
# exporter's own counters, that:
#   - each project received exactly its own service's spans, logs, errors, trace metrics
#     and profile chunks (with their samples);
#   - the error quota on project 13 dropped (and counted) its errors and nothing else,
#     and touched neither of the other projects;
#   - the client reports to project 13 carry exactly its local drops;
#   - the unroutable service's spans, logs, errors, trace metrics and profile chunks were all
#     counted, none sent;
#   - no sink saw an invalid envelope;
#   - while project 14 hangs, the exporter's queue stays small (sampled every second) and
#     the healthy projects have all their spans and logs within 5 s of the traffic's end;
#   - the collector stops within 10 s of SIGTERM, and every span, log and error of
#     project 14 is counted (its final client report, which it cannot send, is logged), its
#     profile chunks too.
# Then two tenants through a second collector with testdata/gateway-tenants.yaml's binding
# (basicauth users, routing::sender): one spoofs the other's service.name, and nothing of it
# reaches the other's project (counted not_allowed); requests without valid credentials are
# refused by the receiver.
# Then 10 service names, over three times routing::max_projects (3), two at a time through a
# third collector with discovery (the sink plays the management API) and routing::idle_timeout
# 2s, while a steady service sends throughout: each name's project retires once idle, steady's
# never, and every name is routed, nothing unaccounted.
# Exits non-zero after all checks if any failed. Everything listens on 127.0.0.1 only.
#
# Environment: GATEWAY_DURATION (20s), GATEWAY_RATE (spans/s, 300), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

export COLLECTOR_PROFILES=1 # the profiles pipeline (scripts/lib.sh)
DURATION=${GATEWAY_DURATION:-20s}
RATE=${GATEWAY_RATE:-300}
SERVICES=(checkout inventory payments inventory-2)
declare -A PROJECT=([checkout]=11 [inventory]=12 [payments]=13 [inventory-2]=14)
HEALTHY=(checkout inventory payments)
LIMITED=payments
HUNG=inventory-2
UNROUTED=checkout-2
MAX_QUEUE=${GATEWAY_MAX_QUEUE:-2000} # items in the exporter's queue at most, during the outage
CATCH_UP_S=5                         # healthy projects complete this long after the traffic ends
STOP_S=10                            # SIGTERM to exit

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
	[[ "$svc" != "$HUNG" ]] || limit=(--hang)
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
# shellcheck disable=SC2046 # profiles_gate is one word
start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml" $(profiles_gate)
wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30

# 3. traffic from five services (otlpgen names the 4th and 5th checkout-2 and inventory-2);
# the exporter's queue is sampled every second while project 14 hangs
log "sending $DURATION of traffic ($RATE spans/s) from ${SERVICES[*]} and $UNROUTED"
start gen "$WORKDIR/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP_PORT" --duration "$DURATION" --rate "$RATE" \
	--services 5 --logs-per-trace 2 --exception-ratio 0.1 --workers 2 --batch 100 --quiet \
	--metrics-interval 1s --profiles-interval 2s --summary-file "$WORKDIR/gen.json"
max_queue=0
while kill -0 "$PID_gen" 2>/dev/null; do
	scrape "$METRICS_PORT" "$WORKDIR/during.prom"
	q=$(metric_sum "$WORKDIR/during.prom" otelcol_exporter_queue_size)
	((q <= max_queue)) || max_queue=$q
	sleep 1
done
wait "$PID_gen" || log "otlpgen reported failures"
forget_pid "$PID_gen"
cat "$WORKDIR/gen.log"

# 3b. the healthy projects have everything soon after the traffic ends, project 14 still hanging
healthy_done() {
	local svc p
	for svc in "${HEALTHY[@]}"; do
		p=${PROJECT[$svc]}
		[[ "$("$SINK" --query "$WORKDIR/sink-$p.json" by_project."$p".spans 2>/dev/null)" == "$("$SINK" --query "$WORKDIR/gen.json" by_service."$svc".spans)" ]] || return 1
		[[ "$("$SINK" --query "$WORKDIR/sink-$p.json" by_project."$p".logs 2>/dev/null)" == "$("$SINK" --query "$WORKDIR/gen.json" by_service."$svc".logs)" ]] || return 1
		[[ "$("$SINK" --query "$WORKDIR/sink-$p.json" by_project."$p".trace_metrics 2>/dev/null)" == "$("$SINK" --query "$WORKDIR/gen.json" by_service."$svc".trace_metric_items)" ]] || return 1
		[[ "$("$SINK" --query "$WORKDIR/sink-$p.json" by_project."$p".profile_chunks 2>/dev/null)" == "$("$SINK" --query "$WORKDIR/gen.json" by_service."$svc".profile_chunks)" ]] || return 1
	done
}
caught_up_ms=-1
t0=$(date +%s%N)
for ((i = 0; i < CATCH_UP_S * 10; i++)); do
	if healthy_done; then
		caught_up_ms=$((($(date +%s%N) - t0) / 1000000))
		break
	fi
	sleep 0.1
done
held=$("$SINK" --query "$WORKDIR/sink-${PROJECT[$HUNG]}.json" held)

# 4. drain, scrape, stop (the collector flushes its last client reports on shutdown, the
# sinks write their final totals on exit)
wait_drained "$METRICS_PORT" "$WORKDIR/sink-${PROJECT[checkout]}.json" 60
scrape "$METRICS_PORT" "$WORKDIR/metrics.prom"
t0=$(date +%s%N)
stop_pid "$PID_collector" 30
stop_ms=$((($(date +%s%N) - t0) / 1000000))
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
for svc in "${HEALTHY[@]}"; do
	p=${PROJECT[$svc]}
	check "project $p: invalid envelopes" "$(sink "$svc" invalid_envelopes)" 0
	check "project $p: spans sent by $svc" "$(sink "$svc" by_project."$p".spans)" "$(gen "$svc" spans)"
	check "project $p: logs sent by $svc" "$(sink "$svc" by_project."$p".logs)" "$(gen "$svc" logs)"
	check "project $p: trace metrics of $svc's points" "$(sink "$svc" by_project."$p".trace_metrics)" "$(gen "$svc" trace_metric_items)"
	check "project $p: profile chunks of $svc's profiles" "$(sink "$svc" by_project."$p".profile_chunks)" "$(gen "$svc" profile_chunks)"
	check "project $p: profile samples" "$(sink "$svc" by_project."$p".profile_samples)" "$(gen "$svc" profile_chunk_samples)"
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
check "project $p: spans, logs and trace metrics dropped" "$(($(dropped "$p" 'category="span"') + $(dropped "$p" 'category="log_item"') + $(dropped "$p" 'category="trace_metric"')))" 0
if ((rate_limited < 1)); then
	check "project $p: at least one error met the 429" "$rate_limited" ">= 1"
fi

p=${PROJECT[$HUNG]}
echo "=== project $p hangs: the others keep flowing, nothing of it is lost without a count, the stop is bounded"
log "max exporter queue during the outage: $max_queue items; healthy projects complete ${caught_up_ms} ms after the traffic; project $p held $held requests then; collector stopped ${stop_ms} ms after SIGTERM"
check "exporter queue at most $MAX_QUEUE items during the outage (max sampled)" "$((max_queue <= MAX_QUEUE ? 1 : 0))" 1
check "healthy projects complete within ${CATCH_UP_S}s of the traffic's end" "$((caught_up_ms >= 0 ? 1 : 0))" 1
check "project $p: requests held open by its Sentry" "$((held > 0 ? 1 : 0))" 1
check "project $p: spans/logs/trace metrics/profile chunks stored" "$(sink "$HUNG" by_project."$p".spans)/$(sink "$HUNG" by_project."$p".logs)/$(sink "$HUNG" by_project."$p".trace_metrics)/$(sink "$HUNG" by_project."$p".profile_chunks)" 0/0/0/0
check "project $p: invalid envelopes" "$(sink "$HUNG" invalid_envelopes)" 0
check "collector stopped within ${STOP_S}s of SIGTERM" "$((stop_ms <= STOP_S * 1000 ? 1 : 0))" 1
# Its final client report cannot be sent, so it is logged with every count of the project:
# all of its drops (network_error when cancelled at shutdown, queue_overflow over its bound).
final=$(grep 'Final Sentry client report' "$WORKDIR/collector.log" | grep "\"project\": \"$p\"" || true)
final_sum() { # final_sum CATEGORY: the sum over reasons of one category in that line
	grep -oE "\"[a-z_]+\.$1\": [0-9]+" <<<"$final" | awk '{ s += $2 } END { print s + 0 }'
}
check "project $p: spans counted (final report)" "$(final_sum span)" "$(gen "$HUNG" spans)"
check "project $p: logs counted (final report)" "$(final_sum log_item)" "$(gen "$HUNG" logs)"
check "project $p: errors counted (final report)" "$(final_sum error)" "$(gen "$HUNG" exceptions)"
check "project $p: trace metrics counted (final report)" "$(final_sum trace_metric)" "$(gen "$HUNG" trace_metric_items)"
check "project $p: profile chunks counted (final report)" "$(final_sum profile_chunk)" "$(gen "$HUNG" profile_chunks)"

echo "=== $UNROUTED has no route and there is no dsn: counted, never sent"
u='project="unroutable"'
check "$UNROUTED: spans counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="span"' 'reason="unroutable"')" "$(gen "$UNROUTED" spans)"
check "$UNROUTED: logs counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="log_item"' 'reason="unroutable"')" "$(gen "$UNROUTED" logs)"
check "$UNROUTED: errors counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="error"' 'reason="unroutable"')" "$(gen "$UNROUTED" exceptions)"
check "$UNROUTED: trace metrics counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="trace_metric"' 'reason="unroutable"')" "$(gen "$UNROUTED" trace_metric_items)"
check "$UNROUTED: profile chunks counted unroutable" "$(metric_sum "$M" otelcol_exporter_sentry_dropped_items "$u" 'category="profile_chunk"' 'reason="unroutable"')" "$(gen "$UNROUTED" profile_chunks)"
echo

# 6. tenants: testdata/gateway-tenants.yaml's binding (basicauth users, routing::sender), two
# teams through a second collector; team-search also sends spans named as payments'.
echo "=== two tenants, one spoofing the other's service.name: nothing of the spoofer reaches the other's project"
start sink "$WORKDIR/sink-tenants.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink-tenants.addr" \
	--quiet --stats-every 0 --summary-file "$WORKDIR/sink-tenants.json"
wait_addr_file "$WORKDIR/sink-tenants.addr" "$PID_sink" "$WORKDIR/sink-tenants.log"
TENANT_SINK=$PID_sink
tsink=$(<"$WORKDIR/sink-tenants.addr")
printf 'team-payments:pay-secret\nteam-search:search-secret\n' >"$WORKDIR/senders.htpasswd"
read -r T_HTTP T_METRICS <<<"$(free_ports 2)"
cat >"$WORKDIR/tenants.yaml" <<EOF
extensions:
  basicauth/senders:
    htpasswd:
      file: $WORKDIR/senders.htpasswd
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$T_HTTP
        auth:
          authenticator: basicauth/senders
exporters:
  sentry:
    routing:
      dsns:
        payments: http://public@$tsink/21
        search: http://public@$tsink/22
      sender:
        auth_attribute: username
        projects:
          team-payments: [payments]
          team-search: [search]
    sending_queue:
      batch:
        enabled: false
service:
  extensions: [basicauth/senders]
$(telemetry_yaml "$T_METRICS")
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [sentry]
EOF
start collector "$WORKDIR/tenants.log" "$OTELCOL" --config "$WORKDIR/tenants.yaml"
wait_port "$T_HTTP" "$PID_collector" "the tenants' collector (see $WORKDIR/tenants.log)" 60
wait_port "$T_METRICS" "$PID_collector" "the tenants' collector's metrics endpoint" 30
# spans USER:PASSWORD SERVICE N FIRST: N one-span traces of SERVICE, as OTLP/JSON; prints the HTTP status.
spans() {
	local creds=$1 svc=$2 n=$3 first=$4 i body="" now auth=()
	now=$(date +%s%N)
	[[ -z "$creds" ]] || auth=(-u "$creds")
	for ((i = first; i < first + n; i++)); do
		body+="${body:+,}{\"traceId\":\"$(printf '%032x' $((i + 1)))\",\"spanId\":\"$(printf '%016x' $((i + 1)))\",\"name\":\"GET /\",\"kind\":2,\"startTimeUnixNano\":\"$now\",\"endTimeUnixNano\":\"$((now + 1000000))\"}"
	done
	curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" -H 'Content-Type: application/json' \
		--data-binary "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\",\"value\":{\"stringValue\":\"$svc\"}}]},\"scopeSpans\":[{\"spans\":[$body]}]}]}" \
		"http://127.0.0.1:$SPANS_PORT/v1/traces"
}
SPANS_PORT=$T_HTTP
check "team-payments sends 20 payments spans" "$(spans team-payments:pay-secret payments 20 0)" 200
check "team-search sends 10 search spans" "$(spans team-search:search-secret search 10 100)" 200
check "team-search sends 15 spans named payments (spoofed)" "$(spans team-search:search-secret payments 15 200)" 200
check "no credentials: refused by the receiver" "$(spans "" payments 5 300)" 401
check "a wrong password: refused by the receiver" "$(spans team-payments:guess payments 5 400)" 401
tq() { "$SINK" --query "$WORKDIR/sink-tenants.json" "$1" 2>/dev/null || echo 0; }
for ((i = 0; i < 100; i++)); do
	[[ "$(tq by_project.21.spans)/$(tq by_project.22.spans)" != "20/10" ]] || break
	sleep 0.1
done
sleep 1 # what else might still arrive
scrape "$T_METRICS" "$WORKDIR/tenants.prom"
stop_pid "$PID_collector" 30
stop_pid "$TENANT_SINK" 10
check "project 21 (payments): spans = team-payments' only" "$(tq by_project.21.spans)" 20
check "project 22 (search): spans = team-search's own" "$(tq by_project.22.spans)" 10
check "spoofed spans counted not_allowed" "$(metric_sum "$WORKDIR/tenants.prom" otelcol_exporter_sentry_dropped_items 'category="span"' 'reason="not_allowed"')" 15
check "tenants: invalid envelopes" "$(tq invalid_envelopes)" 0
echo

# 7. service names churning past routing::max_projects: discovery finds each name's project
# (the sink plays the management API's key look-up), and a project idle for
# routing::idle_timeout is retired, its slot free for the next name.
CHURN_NAMES=10 CHURN_MAX=3 CHURN_IDLE=2
echo "=== $CHURN_NAMES service names, over 3x routing::max_projects ($CHURN_MAX), 2 at a time while steady sends throughout: every name routed, nothing unaccounted"
start sink "$WORKDIR/sink-churn.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink-churn.addr" \
	--quiet --stats-every 0 --summary-file "$WORKDIR/sink-churn.json" --discovery-org churn-org
wait_addr_file "$WORKDIR/sink-churn.addr" "$PID_sink" "$WORKDIR/sink-churn.log"
CHURN_SINK=$PID_sink
csink=$(<"$WORKDIR/sink-churn.addr")
read -r C_HTTP C_METRICS <<<"$(free_ports 2)"
cat >"$WORKDIR/churn.yaml" <<EOF
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$C_HTTP
exporters:
  sentry:
    routing:
      max_projects: $CHURN_MAX
      idle_timeout: ${CHURN_IDLE}s
      discovery:
        url: http://$csink
        allow_insecure_http: true
        org_slug: churn-org
        auth_token: churn-token
    sending_queue:
      batch:
        enabled: false
service:
$(telemetry_yaml "$C_METRICS")
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [sentry]
EOF
start collector "$WORKDIR/churn.log" "$OTELCOL" --config "$WORKDIR/churn.yaml"
wait_port "$C_HTTP" "$PID_collector" "the churn collector (see $WORKDIR/churn.log)" 60
wait_port "$C_METRICS" "$PID_collector" "the churn collector's metrics endpoint" 30
SPANS_PORT=$C_HTTP
churn_sent=0 churn_refused=0
for ((w = 0; w < CHURN_NAMES / 2; w++)); do
	for n in $((2 * w)) $((2 * w + 1)); do
		[[ "$(spans "" "churn-$n" 5 $((10000 + n * 10)))" == 200 ]] || churn_refused=$((churn_refused + 1))
		churn_sent=$((churn_sent + 5))
	done
	for ((i = 0; i < 8; i++)); do # 2.4 s and more: the wave's names go idle and retire; steady does not
		[[ "$(spans "" steady 1 $((20000 + w * 10 + i)))" == 200 ]] || churn_refused=$((churn_refused + 1))
		churn_sent=$((churn_sent + 1))
		sleep 0.3
	done
done
cq() { "$SINK" --query "$WORKDIR/sink-churn.json" "$1" 2>/dev/null || echo 0; }
for ((i = 0; i < 100; i++)); do
	[[ "$(cq spans)" != "$churn_sent" ]] || break
	sleep 0.1
done
scrape "$C_METRICS" "$WORKDIR/churn.prom"
stop_pid "$PID_collector" 30
stop_pid "$CHURN_SINK" 10
C="$WORKDIR/churn.prom"
churn_projects=$(grep -E '^otelcol_exporter_sentry_sent_items(_total)?\{' "$C" | grep 'category="span"' | grep -oE 'project="[0-9]+"' | sort -u | wc -l)
churn_retired=$(metric_sum "$C" otelcol_exporter_sentry_projects_retired)
log "churn: $churn_sent spans from $((CHURN_NAMES + 1)) names; $churn_projects projects got spans; $churn_retired projects retired"
check "churn: requests accepted" "$churn_refused" 0
check "churn: spans stored = spans sent" "$(cq spans)" "$churn_sent"
check "churn: projects that got spans (every name's)" "$churn_projects" "$((CHURN_NAMES + 1))"
check "churn: spans counted unroutable" "$(metric_sum "$C" otelcol_exporter_sentry_dropped_items 'category="span"' 'reason="unroutable"')" 0
check "churn: spans dropped, any reason" "$(metric_sum "$C" otelcol_exporter_sentry_dropped_items 'category="span"')" 0
check "churn: sent_items spans = spans sent" "$(metric_sum "$C" otelcol_exporter_sentry_sent_items 'category="span"')" "$churn_sent"
check "churn: projects retired: the names' (at least the first $((CHURN_NAMES - 2))), never steady's" "$((churn_retired >= CHURN_NAMES - 2 && churn_retired <= CHURN_NAMES ? 1 : 0))" 1
check "churn: invalid envelopes" "$(cq invalid_envelopes)" 0
echo

if ((failures > 0)); then
	log "FAIL: $failures checks failed (logs in $WORKDIR)"
	exit 1
fi
log "OK: three projects got exactly their own data; the error quota on one touched only its errors; a hung project held nothing else up and was counted; the unroutable service was counted; a tenant spoofing another's service.name reached nothing of it; names churning past max_projects were all routed"
