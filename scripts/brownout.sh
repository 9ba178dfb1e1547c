#!/usr/bin/env bash
# make brownout: issue 19's brownout through the built collector. One project (a `dsn`, no
# routing), the exporter at its defaults, the batch processor; Sentry (the sink) answers a
# random BROWNOUT_FAIL_RATIO (20 %) of the requests BROWNOUT_FAIL_STATUS (503), drawn from
# BROWNOUT_SEED, and the rest after FAULTS_SINK_DELAY (50 ms). otlpgen sends 200 traces/s of
# 5 spans (1,000 spans/s, ~200 envelopes/s; no logs or exceptions) for BROWNOUT_DURATION
# (20 s), then the load ends. The sink's timeline (what it stored, second by second) gives
# the share of the offered spans stored by each mark: the load's end, +5 s, +10 s, +20 s,
# +30 s, +60 s, +90 s, +120 s. It fails unless:
#   - at least 75 % of the spans are stored by the load's end;
#   - 99 % within 10 s of it;
#   - all of them within BROWNOUT_WAIT (120 s) of it;
#   - nothing is dropped (every otelcol_exporter_sentry_dropped_items series is 0 when the
#     wait ends, before SIGTERM), and the collector refused no request (a refused request
#     is data lost that no counter of the exporter shows);
#   - the sink saw no invalid envelope, and stored each span once (sent_items = stored).
# Offered spans are those otlpgen sent, accepted or not. The stored share at a mark counts
# whole seconds before it and, of the second it falls in, the share passed.
#
# Environment: BROWNOUT_DURATION (20s), BROWNOUT_TRACES (traces/s, 200),
# BROWNOUT_SPANS_PER_TRACE (5), BROWNOUT_FAIL_RATIO (0.2), BROWNOUT_FAIL_STATUS (503),
# BROWNOUT_SEED (1), BROWNOUT_WAIT (120s), BROWNOUT_EXPORTER_YAML (more exporter settings),
# FAULTS_SINK_DELAY (50ms), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=faultlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"

DURATION=${BROWNOUT_DURATION:-20s}
TRACES=${BROWNOUT_TRACES:-200}
SPANS_PER_TRACE=${BROWNOUT_SPANS_PER_TRACE:-5}
FAIL_RATIO=${BROWNOUT_FAIL_RATIO:-0.2}
FAIL_STATUS=${BROWNOUT_FAIL_STATUS:-503}
SEED=${BROWNOUT_SEED:-1}
WAIT_S=$(secs "${BROWNOUT_WAIT:-120s}")
RATE=$((TRACES * SPANS_PER_TRACE))
MIN_AT_END=75    # % stored by the load's end
MIN_AT_10S=99    # % stored 10 s after it
MARKS=(0 5 10 20 30 60 90 120)

need_binaries
make_workdir brownout
install_trap
D=$WORKDIR

start_fault_sink "$D" --delay "$FAULTS_SINK_DELAY" --fail-ratio "$FAIL_RATIO" --fail-status "$FAIL_STATUS" --seed "$SEED"
start_fault_collector "$D" "$SINK_PORT" "${BROWNOUT_EXPORTER_YAML:-}"

log "brownout: $FAIL_RATIO of the requests answered $FAIL_STATUS (seed $SEED), the rest after $FAULTS_SINK_DELAY; $DURATION of $TRACES traces/s of $SPANS_PER_TRACE spans"
run_gen "$D" --duration "$DURATION" --rate "$RATE" --spans-per-trace "$SPANS_PER_TRACE" --services 1 \
	--logs-per-trace 0 --exception-ratio 0 --workers 2 --batch 100 --seed "$SEED"
offered=$(($("$SINK" --query "$D/gen.json" spans) + $("$SINK" --query "$D/gen.json" failed_spans)))

# wait until every offered span is stored, or BROWNOUT_WAIT is over
complete_ms=-1
while (($(now_ms) < LOAD_END_MS + WAIT_S * 1000)); do
	if (($("$SINK" --query "$D/sink.json" spans) >= offered)); then
		complete_ms=$(($(now_ms) - LOAD_END_MS))
		break
	fi
	kill -0 "$PID_collector" 2>/dev/null || die "the collector died (see $D/collector.log)"
	nap 1
done
WAIT_END_MS=$(now_ms)
scrape "$METRICS_PORT" "$D/end.prom"
stop_collector "$D"
stop_pid "$PID_sink" 10

stored=$("$SINK" --query "$D/sink.json" spans)
echo
echo "=== brownout: $FAIL_RATIO of requests answered $FAIL_STATUS, $TRACES traces/s x $SPANS_PER_TRACE spans for $DURATION, then no load"
echo "offered $offered spans ($("$SINK" --query "$D/gen.json" failed_spans) refused by the collector); sink answers: $("$SINK" --query "$D/sink.json" requests_by_status)"
printf '%-16s %12s %10s\n' "time" "stored spans" "stored %"
declare -A AT
for m in "${MARKS[@]}"; do
	label="load end"
	((m == 0)) || label="+${m}s"
	if ((LOAD_END_MS + m * 1000 <= WAIT_END_MS)); then
		AT[$m]=$(tl_by "$D/sink.tl" spans $((LOAD_END_MS + m * 1000)))
		printf '%-16s %12s %10s\n' "$label" "${AT[$m]}" "$(pct "${AT[$m]}" "$offered")"
	elif ((complete_ms >= 0)); then
		AT[$m]=$offered
		printf '%-16s %12s %10s\n' "$label" "${AT[$m]}" "$(pct "${AT[$m]}" "$offered")"
	else
		AT[$m]=0
		printf '%-16s %12s %10s\n' "$label" "-" "(past BROWNOUT_WAIT)"
	fi
done
at_wait=$(tl_by "$D/sink.tl" spans "$WAIT_END_MS")
echo "stored per second during the load (sink timeline):"
awk -v a=$((LOAD_START_MS / 1000)) -v b=$((LOAD_END_MS / 1000)) -v c="$(tl_col "$D/sink.tl" spans)" \
	'!/^#/ && $1 >= a && $1 <= b { printf " %d", $c } END { print "" }' "$D/sink.tl"
echo

dropped_end=$(metric_sum "$D/end.prom" otelcol_exporter_sentry_dropped_items)
dropped_final=$(metric_sum "$D/final.prom" otelcol_exporter_sentry_dropped_items)
sent=$(metric_sum "$D/final.prom" otelcol_exporter_sentry_sent_items 'category="span"')
verdict "$(ge "$(pct "${AT[0]}" "$offered")" $MIN_AT_END)" "stored by the load's end >= ${MIN_AT_END} %" "$(pct "${AT[0]}" "$offered") %"
verdict "$(ge "$(pct "${AT[10]}" "$offered")" $MIN_AT_10S)" "stored within 10 s of the load's end >= ${MIN_AT_10S} %" "$(pct "${AT[10]}" "$offered") %"
verdict "$((complete_ms >= 0 ? 1 : 0))" "every span stored within ${WAIT_S} s" \
	"$([[ $complete_ms -ge 0 ]] && echo "after $((complete_ms / 1000)) s" || echo "$(pct "$at_wait" "$offered") % at +${WAIT_S}s")"
verdict "$((dropped_end == 0 ? 1 : 0))" "nothing dropped (dropped_items, before SIGTERM)" "$dropped_end ($dropped_final items, all categories, after SIGTERM)"
verdict "$(($("$SINK" --query "$D/gen.json" failed_spans) == 0 ? 1 : 0))" "the collector refused no request" "$("$SINK" --query "$D/gen.json" http_errors)"
verdict "$(($("$SINK" --query "$D/sink.json" invalid_envelopes) == 0 ? 1 : 0))" "no invalid envelope" "$("$SINK" --query "$D/sink.json" invalid_envelopes)"
verdict "$((sent == stored ? 1 : 0))" "sent_items = stored spans" "$sent, $stored"
counted=$(metric_sum "$D/final.prom" otelcol_exporter_sentry_dropped_items 'category="span"')
accepted=$("$SINK" --query "$D/gen.json" spans)
verdict "$((stored + counted == accepted ? 1 : 0))" "after shutdown, every accepted span stored or counted" "$stored stored + $counted counted, $accepted accepted"
log "collector stopped ${STOP_MS} ms after SIGTERM; dropped after shutdown (from the $FINAL_FROM): $(dropped_by "$D/final.prom")"
finish brownout "a 20 % brownout: 75 % stored during the load, 99 % within 10 s, all within 120 s, nothing dropped"
