#!/usr/bin/env bash
# make crash: the built collector with a persistent sending queue (file_storage) killed with
# SIGKILL at random moments under mixed traffic, then restarted on the same queue directory
# (docs/durability.md). otlpgen sends CRASH_RATE (300) spans/s for CRASH_DURATION (60 s):
# traces of 6 spans in requests of 30 spans (exporterhelper's batcher cuts them anew), 2 logs
# per trace, every service's metrics each second and profiles every 2 s, straight into the
# exporter (no batch processor: it would acknowledge what only its memory holds). Every
# CRASH_KILL_MIN..CRASH_KILL_MAX s (3..8 s, CRASH_SEED) the collector is killed and Sentry
# (the sink) changes: up, hung (reads, never answers), refusing (not listening), in turn;
# the collector comes back at once. After the load, Sentry is up, the queue drains and the
# collector stops with SIGTERM.
# Acknowledged is what otlpgen had a 2xx for. Stored is what the sink stored (a hung sink
# stores nothing). Counted is otelcol_exporter_sentry_dropped_items of every run of the
# collector, from its last scrape before each kill (what a run counted after it is lost
# with it) and after the drain.
# It fails unless, per category: every acknowledged span is stored at least once (by its
# trace and span id) or counted, and stored + counted >= acknowledged for logs, trace metrics
# (what otlpgen's points become) and profile chunks; and the sink saw no invalid envelope.
# It prints, per category, acknowledged, stored, unique, duplicates and counted.
#
# Environment: CRASH_DURATION (60s), CRASH_RATE (300), CRASH_KILL_MIN (3), CRASH_KILL_MAX (8),
# CRASH_SEED (1), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=faultlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"

DURATION_S=$(secs "${CRASH_DURATION:-60s}")
RATE=${CRASH_RATE:-300}
KILL_MIN=${CRASH_KILL_MIN:-3}
KILL_MAX=${CRASH_KILL_MAX:-8}
SEED=${CRASH_SEED:-1}
RANDOM=$SEED
export COLLECTOR_PROFILES=1

need_binaries
make_workdir crash
install_trap
D=$WORKDIR
mkdir -p "$D/queue"
read -r SINK_PORT GRPC_PORT HTTP_PORT METRICS_PORT <<<"$(free_ports 4)"

# The collector: a persistent queue in $D/queue, what cannot be durable off (assembly, the
# dedupe window), retries without end (a crash test counts no give-ups), no processor.
write_collector_config "$D/collector.yaml" "$GRPC_PORT" "$HTTP_PORT" "$METRICS_PORT" "$SINK_PORT" "$(
	cat <<YAML
assembly: {wait: 0s}
error_events: {dedupe_window: 0s}
client_reports: {interval: 1s}
retry_on_failure: {max_elapsed_time: 0s, max_interval: 2s}
sending_queue: {storage: file_storage, queue_size: 1000000}
YAML
)" ""
awk -v dir="$D/queue" '
	NR == 1 { print "extensions:\n  file_storage:\n    directory: " dir "\n" }
	{ print }
	$0 == "service:" { print "  extensions: [file_storage]" }' "$D/collector.yaml" >"$D/c.tmp" && mv "$D/c.tmp" "$D/collector.yaml"
RUN=0
start_collector() {
	RUN=$((RUN + 1))
	# shellcheck disable=SC2046 # profiles_gate is one word or none
	start collector "$D/collector.$RUN.log" "$OTELCOL" --config "$D/collector.yaml" $(profiles_gate)
	wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $D/collector.$RUN.log)" 60
	wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30
}

PHASE=0 SINKS=0
PHASES=(up hung refusing)
# sink_phase MODE: the sink restarted as MODE (refusing: none), on SINK_PORT.
sink_phase() {
	[[ -z "$PID_sink" ]] || stop_pid "$PID_sink" 5
	PID_sink=""
	[[ $1 != refusing ]] || return 0
	SINKS=$((SINKS + 1))
	local extra=()
	[[ $1 != hung ]] || extra=(--hang)
	start sink "$D/sink.$SINKS.log" "$SINK" --listen "127.0.0.1:$SINK_PORT" --quiet --stats-every 0 \
		--summary-file "$D/sink.$SINKS.json" --record-file "$D/rec.$SINKS.jsonl" "${extra[@]}"
	wait_port "$SINK_PORT" "$PID_sink" "the sink" 10
}

sink_phase up
start_collector
log "crash: ${DURATION_S}s of $RATE spans/s, the collector killed every ${KILL_MIN}-${KILL_MAX}s; Sentry up, hung, refusing in turn"
start gen "$D/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP_PORT" --quiet --summary-file "$D/gen.json" \
	--duration "${DURATION_S}s" --rate "$RATE" --services 2 --spans-per-trace 6 --batch 30 --logs-per-trace 2 \
	--exception-ratio 0.1 --workers 2 --metrics-interval 1s --profiles-interval 2s --seed "$SEED" --timeout 2s
KILLS=0
while kill -0 "$PID_gen" 2>/dev/null; do
	nap $((KILL_MIN + RANDOM % (KILL_MAX - KILL_MIN + 1)))
	kill -0 "$PID_gen" 2>/dev/null || break
	scrape "$METRICS_PORT" "$D/counted.$RUN.prom"
	kill -KILL "$PID_collector"
	wait "$PID_collector" 2>/dev/null || true
	forget_pid "$PID_collector"
	KILLS=$((KILLS + 1))
	PHASE=$(((PHASE + 1) % 3))
	sink_phase "${PHASES[PHASE]}"
	start_collector
done
wait "$PID_gen" || log "otlpgen reported failures (see $D/gen.log)"
forget_pid "$PID_gen"
if [[ ${PHASES[PHASE]} != up ]]; then
	sink_phase up
fi
wait_drained "$METRICS_PORT" "$D/sink.$SINKS.json" 120
scrape "$METRICS_PORT" "$D/counted.$RUN.prom" # drained: nothing is left to count at SIGTERM
stop_pid "$PID_collector" 30
stop_pid "$PID_sink" 5

# Acknowledged, stored, counted.
gen() { "$SINK" --query "$D/gen.json" "$1"; }
stored() {
	local s=0 f
	for f in "$D"/sink.*.json; do s=$((s + $("$SINK" --query "$f" "$1"))); done
	echo "$s"
}
scraped() {
	local s=0 f
	for f in "$D"/counted.*.prom; do s=$((s + $(metric_sum "$f" otelcol_exporter_sentry_dropped_items "category=\"$1\""))); done
	echo "$s"
}
# reported CATEGORY: the drops the collector's client reports told the sink of (they outlive a kill).
reported() {
	{ grep -ho "\"[a-z_]*/$1\":[0-9]*" "$D"/sink.*.json || true; } | awk -F: '{ s += $2 } END { print s + 0 }'
}
# counted CATEGORY: the larger of the scraped and the reported drops.
counted() {
	local a b
	a=$(scraped "$1") b=$(reported "$1")
	echo $((a > b ? a : b))
}
invalid=$(stored invalid_envelopes)
# Unique spans: each transaction's head and children, by trace and span id.
read -r span_copies span_unique < <(cat "$D"/rec.*.jsonl 2>/dev/null | awk '
	/"type":"transaction"/ {
		match($0, /"trace_id":"[0-9a-f]+"/); t = substr($0, RSTART + 12, 32)
		if (match($0, /"span_id":"[0-9a-f]+"/)) { k = t substr($0, RSTART + 11, 16); n++; if (!(k in seen)) { seen[k]; u++ } }
		if (match($0, /"children":\[[^]]*\]/)) {
			c = substr($0, RSTART + 12, RLENGTH - 13); m = split(c, ids, ",")
			for (i = 1; i <= m; i++) { gsub(/"/, "", ids[i]); k = t ids[i]; n++; if (!(k in seen)) { seen[k]; u++ } }
		}
	}
	END { print n + 0, u + 0 }')

failed=0
# row CATEGORY ACKNOWLEDGED STORED UNIQUE COUNTED: UNIQUE is "" where the sink cannot tell
# copies apart; then the duplicates are at least what was stored beyond what was acknowledged.
row() {
	local u=$4 dup
	if [[ -z $u ]]; then
		u=$(($3 < $2 ? $3 : $2))
		dup=">=$(($3 - u))"
	else
		dup=$(($3 - u))
	fi
	printf '  %-13s acknowledged %7d  stored %7d  duplicates %7s  counted %6d\n' "$1" "$2" "$3" "$dup" "$5"
	if ((u + $5 < $2)); then
		log "FAIL: $1: $(($2 - u - $5)) acknowledged, neither stored nor counted"
		failed=1
	fi
}
log "crash: $KILLS kills, $RUN runs of the collector, $SINKS sinks; per category:"
row span "$(gen spans)" "$span_copies" "$span_unique" "$(counted span)"
row log_item "$(gen logs)" "$(stored logs)" "" "$(counted log_item)"
row trace_metric "$(gen trace_metric_items)" "$(stored trace_metrics)" "" "$(counted trace_metric)"
row profile_chunk "$(gen profile_chunks)" "$(stored profile_chunks)" "" "$(counted profile_chunk)"
printf '  %-13s stored: transactions %d, error events %d (a resend keeps its event_id)\n' "events" "$(stored items.transaction)" "$(stored errors)"
((invalid == 0)) || { log "FAIL: the sink saw $invalid invalid envelopes"; failed=1; }
((KILLS > 0)) || { log "FAIL: the collector was never killed (CRASH_DURATION too short)"; failed=1; }
((failed == 0)) || exit 1
log "crash: every acknowledged item stored at least once or counted"
