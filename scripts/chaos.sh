#!/usr/bin/env bash
# make chaos: TestInvariantUnderChaos (exporter_test.go) through the built collector.
# CHAOS_RUNS (10) runs, each with fresh processes and its own seed (CHAOS_SEED + run - 1,
# for the sink's answers and otlpgen's traces): CHAOS_SERVICES (10) services, each routed to
# its own project, 2 logs per trace, 10 % exceptions (each recorded on its span and logged
# with that span's id: otlpgen --exception-log-on-span, so the exporter's dedupe merges the
# two), every service's metrics each second (all six OTLP kinds, cumulative) and a CPU
# profile every 2 s through the profiles pipeline, CHAOS_RATE (1,000) spans/s for
# CHAOS_DURATION (10 s), the batch processor, the exporter at its defaults. The sink
# answers each request at random (sentrysink --chaos): 10 % connection reset, 10 % 503,
# 20 % 429 with one of the test's X-Sentry-Rate-Limits values (per category, all
# categories, unparsable, none; with Retry-After: 1, so every limit refills within the
# run), 60 % stored, after FAULTS_SINK_DELAY (50 ms). After the load, the collector gets
# CHAOS_SETTLE (10 s) at most to drain (past the 5 s dedupe window), then SIGTERM: what is
# still waiting for a retry is counted at shutdown, so that path is played too.
#
# In each run, for every project and category (span, log_item, error, trace_metric,
# profile_chunk), exactly:
#     delivered by otlpgen = stored by the sink + otelcol_exporter_sentry_dropped_items
# with the dropped items summed over reasons from the collector's final metric export at
# shutdown. Errors follow the README's dedupe rule: an exception recorded on a span and
# logged is two items in under `error` (otlpgen counts both), one sent and one counted
# `deduplicated` (the runs together must have merged some, or the rule went unplayed). No
# tolerance: one error event lost, or stored twice, fails the run (the
# script proves it at the end by removing one stored error event from the first run's
# counts and checking that the check then fails). Also, per project: sent_items = stored for
# spans, logs, errors and transactions (nothing counted sent that Sentry did not store);
# the collector's receiver accepted exactly what otlpgen counted delivered, and refused
# nothing; no invalid envelope.
#
# Environment: CHAOS_RUNS (10), CHAOS_SERVICES (10), CHAOS_DURATION (10s), CHAOS_RATE
# (1000), CHAOS_SEED (1), CHAOS_SETTLE (10), CHAOS_EXPORTER_YAML, FAULTS_SINK_DELAY (50ms),
# KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=faultlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"

RUNS=${CHAOS_RUNS:-10}
SERVICES=${CHAOS_SERVICES:-10}
DURATION_S=$(secs "${CHAOS_DURATION:-10s}")
RATE=${CHAOS_RATE:-1000}
SEED=${CHAOS_SEED:-1}
SETTLE_S=${CHAOS_SETTLE:-10}

export COLLECTOR_PROFILES=1 # the profiles pipeline (scripts/lib.sh)
need_binaries
make_workdir chaos
install_trap

# account DIR [LOSE_ONE_ERROR]: per project and category, "project category in stored
# dropped unaccounted sent" lines; with LOSE_ONE_ERROR=1, project 1's stored errors count
# one less (the check's own test).
account() {
	local dir=$1 lose=${2:-0} i p c in stored dropped sent
	for ((i = 0; i < SERVICES; i++)); do
		p=$((i + 1))
		while read -r c in stored dropped sent; do
			((lose == 0 || p != 1)) || [[ $c != error ]] || stored=$((stored - 1))
			echo "$p $c $in $stored $dropped $((in - stored - dropped)) $sent"
		done < <(items_by_category "$dir/final.prom" "$dir/gen.json" "$dir/sink.json" "$p" "$(service_name "$i")")
	done
}

# unaccounted ACCOUNT_FILE: the sum of |unaccounted| over projects and categories.
unaccounted() { awk '{ u += ($6 < 0 ? -$6 : $6) } END { print u + 0 }' "$1"; }

declare -A R
run_one() {
	local n=$1 seed=$((SEED + $1 - 1)) dir="$WORKDIR/run$1" p
	mkdir -p "$dir"
	start_fault_sink "$dir" --delay "$FAULTS_SINK_DELAY" --chaos --seed "$seed"
	start_fault_collector "$dir" "" "$(routes_yaml "$SERVICES" "$SINK_PORT")${CHAOS_EXPORTER_YAML:+$'\n'$CHAOS_EXPORTER_YAML}"
	run_gen "$dir" --duration "${DURATION_S}s" --rate "$RATE" --services "$SERVICES" --logs-per-trace 2 \
		--exception-ratio 0.1 --exception-log-on-span --workers 2 --batch 100 --seed "$seed" --metrics-interval 1s --profiles-interval 2s
	wait_drained "$METRICS_PORT" "$dir/sink.json" "$SETTLE_S"
	stop_collector "$dir"
	stop_pid "$PID_sink" 10

	account "$dir" >"$dir/account"
	local M="$dir/final.prom" bad_sent=0 tx_sent tx_stored
	bad_sent=$(awk '$3 != 0 || $7 != 0 { if ($7 != $4) b++ } END { print b + 0 }' "$dir/account")
	for ((p = 1; p <= SERVICES; p++)); do
		tx_sent=$(metric_sum "$M" otelcol_exporter_sentry_sent_items "project=\"$p\"" 'category="transaction"')
		tx_stored=$("$SINK" --query "$dir/sink.json" "by_project.$p.transactions")
		((tx_sent == tx_stored)) || bad_sent=$((bad_sent + 1))
	done
	sum() { awk -v c="$1" -v k="$2" '$2 == c { s += $k } END { print s + 0 }' "$dir/account"; }
	R[$n.seed]=$seed
	R[$n.unacc]=$(unaccounted "$dir/account")
	R[$n.bad_sent]=$bad_sent
	R[$n.spans]="$(sum span 3)/$(sum span 4)/$(sum span 5)"
	R[$n.logs]="$(sum log_item 3)/$(sum log_item 4)/$(sum log_item 5)"
	R[$n.metrics]="$(sum trace_metric 3)/$(sum trace_metric 4)/$(sum trace_metric 5)"
	R[$n.profiles]="$(sum profile_chunk 3)/$(sum profile_chunk 4)/$(sum profile_chunk 5)"
	R[$n.dedup]=$(metric_sum "$M" otelcol_exporter_sentry_dropped_items 'category="error"' 'reason="deduplicated"')
	R[$n.errors]="$(sum error 3)/$(sum error 4)/${R[$n.dedup]}/$(($(sum error 5) - R[$n.dedup]))"
	R[$n.answers]=$("$SINK" --query "$dir/sink.json" requests_by_status.200 requests_by_status.429 requests_by_status.503 requests_by_status.reset | tr ' ' /)
	R[$n.accepted]=$((
		$(metric_sum "$M" otelcol_receiver_accepted_spans) == $("$SINK" --query "$dir/gen.json" spans) &&
		$(metric_sum "$M" otelcol_receiver_accepted_log_records) == $("$SINK" --query "$dir/gen.json" logs) &&
		$(metric_sum "$M" otelcol_receiver_accepted_metric_points) == $("$SINK" --query "$dir/gen.json" metric_points) ? 1 : 0))
	R[$n.reasons]=$(dropped_by "$M" reason)
	R[$n.refused]=$("$SINK" --query "$dir/gen.json" http_errors)
	R[$n.invalid]=$("$SINK" --query "$dir/sink.json" invalid_envelopes)
	R[$n.from]=$FINAL_FROM
	R[$n.stop]=$STOP_MS
	log "[run $n, seed $seed] unaccounted ${R[$n.unacc]}; spans ${R[$n.spans]}, logs ${R[$n.logs]}, trace metrics ${R[$n.metrics]}, profile chunks ${R[$n.profiles]}, errors ${R[$n.errors]} (in/stored/...); answers 200/429/503/reset ${R[$n.answers]}; stop ${STOP_MS} ms"
	if [[ ${R[$n.unacc]} != 0 ]]; then
		awk '$6 != 0 { printf "  project %s %s: in %s, stored %s, dropped %s, unaccounted %s\n", $1, $2, $3, $4, $5, $6 }' "$dir/account" >&2
	fi
}

log "chaos: $RUNS runs of ${DURATION_S}s, $SERVICES services at $RATE spans/s, seeds $SEED..$((SEED + RUNS - 1))"
for ((n = 1; n <= RUNS; n++)); do
	run_one "$n"
done

echo
echo "chaos: $RUNS runs, $SERVICES projects, ${DURATION_S}s at $RATE spans/s; in/stored/dropped per category over all projects"
echo "(errors: in/stored/deduplicated/other dropped; answers: 200/429/503/reset)"
printf '%4s %5s %22s %22s %22s %16s %24s %20s %6s %8s\n' run seed "spans" "logs" "trace metrics" "profile chunks" "errors" "answers" "stop" unacc
for ((n = 1; n <= RUNS; n++)); do
	printf '%4s %5s %22s %22s %22s %16s %24s %20s %6s %8s\n' "$n" "${R[$n.seed]}" "${R[$n.spans]}" "${R[$n.logs]}" "${R[$n.metrics]}" "${R[$n.profiles]}" "${R[$n.errors]}" "${R[$n.answers]}" "${R[$n.stop]}" "${R[$n.unacc]}"
done
echo "dropped items by reason, all projects and categories (log_byte left out):"
for ((n = 1; n <= RUNS; n++)); do
	printf '%4s  %s\n' "$n" "${R[$n.reasons]}"
done
echo
for ((n = 1; n <= RUNS; n++)); do
	verdict "$((R[$n.unacc] == 0 ? 1 : 0))" "[run $n] in = stored + dropped, each project and category" "${R[$n.unacc]} unaccounted"
	verdict "$((R[$n.bad_sent] == 0 ? 1 : 0))" "[run $n] sent_items = stored, each project and category" "${R[$n.bad_sent]} differ"
	verdict "${R[$n.accepted]}" "[run $n] receiver accepted = otlpgen delivered; nothing refused" "${R[$n.refused]}"
	[[ "${R[$n.refused]}" == "{}" ]] || verdict 0 "[run $n] the collector refused no request" "${R[$n.refused]}"
	[[ "${R[$n.invalid]}" == 0 ]] || verdict 0 "[run $n] no invalid envelope" "${R[$n.invalid]}"
	[[ "${R[$n.from]}" == "console export" ]] || verdict 0 "[run $n] counts from the final export at shutdown" "${R[$n.from]}"
done
dedup=0
for ((n = 1; n <= RUNS; n++)); do dedup=$((dedup + R[$n.dedup])); done
verdict "$((dedup > 0 ? 1 : 0))" "the dedupe rule was played: error events counted deduplicated" "$dedup in all runs"
# the check's own test: one stored error event fewer must show as exactly one unaccounted item
lost=$(unaccounted <(account "$WORKDIR/run1" 1))
verdict "$((lost == R[1.unacc] + 1 ? 1 : 0))" "self-check: one error event removed from run 1's stored count is caught" "$lost unaccounted (run 1 had ${R[1.unacc]})"
finish chaos "$RUNS runs under random resets, 503s, 429s and limits: every item stored or counted, exactly"
