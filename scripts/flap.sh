#!/usr/bin/env bash
# make flap: issue 19's flapping Sentry, through the built collector. Sentry (the sink)
# alternates FLAP_PERIOD (10 s) up and FLAP_PERIOD down from the first request it receives
# (sentrysink --flap): up, it answers after FAULTS_SINK_DELAY (50 ms); down, it hangs:
# requests are read and held unanswered until the window ends, then stored and answered
# (unless their client gave up first). FLAP_SERVICES (100) services, each routed to its own
# project (one service: a `dsn`, no routing), 2 logs per trace, 10 % exceptions, the batch
# processor, the exporter at its defaults; FLAP_RATE (3,000) spans/s for FLAP_DURATION
# (6 min: the issue's 2 minutes of flapping are the warm-up; on a starved machine the GC
# overshoots its goal later and later into the run, so the plateau can take 4 minutes,
# and the last two show whether it stays there). Then the sink keeps flapping while the collector drains (at most FLAP_SETTLE,
# 2 x FLAP_PERIOD: one up window at least) and gets SIGTERM. The collector's RSS is sampled every second.
# It fails unless:
#   - RSS does not run away: over the last FLAP_SLOPE_WINDOW (120 s) of the load, the
#     least-squares slope of the peak RSS so far (VmHWM, sampled every second: RSS swings
#     with each cycle, its peak only grows while memory runs away) is at most
#     FLAP_MAX_SLOPE (32) MiB/min (docs/faults.md); the slope of VmRSS itself is printed too;
#   - peak RSS stays within FLAP_MAX_RSS_MIB (512), the bound of docs/memory.md under any
#     failure;
#   - nothing is lost uncounted: per category, what otlpgen delivered = stored by the sink
#     + otelcol_exporter_sentry_dropped_items from the collector's final metric export at
#     shutdown; each item stored once (sent_items = stored); the collector refused nothing;
#   - the sink saw no invalid envelope.
#
# Environment: FLAP_DURATION (6m), FLAP_PERIOD (10s), FLAP_RATE (3000), FLAP_SERVICES
# (100), FLAP_MAX_SLOPE (32), FLAP_SLOPE_WINDOW (120), FLAP_MAX_RSS_MIB (512), FLAP_SETTLE (seconds, 2 x FLAP_PERIOD), FLAP_SEED (1),
# FLAP_EXPORTER_YAML, FAULTS_SINK_DELAY (50ms), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=faultlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"

DURATION_S=$(secs "${FLAP_DURATION:-6m}")
SLOPE_WINDOW_S=${FLAP_SLOPE_WINDOW:-120}
MAX_RSS_MIB=${FLAP_MAX_RSS_MIB:-512}
PERIOD_S=$(secs "${FLAP_PERIOD:-10s}")
RATE=${FLAP_RATE:-3000}
SERVICES=${FLAP_SERVICES:-100}
MAX_SLOPE=${FLAP_MAX_SLOPE:-32}
SEED=${FLAP_SEED:-1}
SETTLE_S=${FLAP_SETTLE:-$((2 * PERIOD_S))}

need_binaries
make_workdir flap
install_trap
D=$WORKDIR

start_fault_sink "$D" --delay "$FAULTS_SINK_DELAY" --flap "${PERIOD_S}s"
if ((SERVICES == 1)); then
	start_fault_collector "$D" "$SINK_PORT" "${FLAP_EXPORTER_YAML:-}"
else
	start_fault_collector "$D" "" "$(routes_yaml "$SERVICES" "$SINK_PORT")${FLAP_EXPORTER_YAML:+$'\n'$FLAP_EXPORTER_YAML}"
fi
rss_series "$PID_collector" "$D/rss"

log "flap: Sentry up ${PERIOD_S}s, hung ${PERIOD_S}s, ...; ${DURATION_S}s of $RATE spans/s from $SERVICES services"
run_gen "$D" --duration "${DURATION_S}s" --rate "$RATE" --services "$SERVICES" --logs-per-trace 2 --exception-ratio 0.1 \
	--workers 2 --batch 100 --seed "$SEED"
wait_drained "$METRICS_PORT" "$D/sink.json" "$SETTLE_S"
stop_collector "$D"
stop_rss
stop_pid "$PID_sink" 10

origin=$("$SINK" --query "$D/sink.json" fault_origin_unix_ms)
from=$((LOAD_END_MS - SLOPE_WINDOW_S * 1000))
slope=$(rss_slope "$D/rss" "$from" "$LOAD_END_MS" hwm)
raw_slope=$(rss_slope "$D/rss" "$from" "$LOAD_END_MS")
echo
echo "=== flap: Sentry up ${PERIOD_S}s / hung ${PERIOD_S}s; $SERVICES services, $RATE spans/s for ${DURATION_S}s"
printf '%8s %6s %9s %9s %9s %9s\n' "t" phase "RSS MiB" "peak MiB" "stored" "held"
sc=$(tl_col "$D/sink.tl" spans) hc=$(tl_col "$D/sink.tl" held)
for ((t = PERIOD_S / 2; t <= DURATION_S; t += PERIOD_S)); do
	at=$((LOAD_START_MS + t * 1000))
	phase=up
	(((at - origin) / (PERIOD_S * 1000) % 2 == 0)) || phase=down
	# spans stored and the most requests held in the PERIOD_S around t
	read -r st he <<<"$(awk -v a=$(((at - PERIOD_S * 500) / 1000)) -v b=$(((at + PERIOD_S * 500) / 1000)) -v c="$sc" -v h="$hc" \
		'!/^#/ && $1 >= a && $1 < b { s += $c; if ($h > m) m = $h } END { print s + 0, m + 0 }' "$D/sink.tl")"
	printf '%7ss %6s %9s %9s %9s %9s\n' "$t" "$phase" "$(rss_at "$D/rss" "$at")" "$(rss_at "$D/rss" "$at" hwm)" "$st" "$he"
done
peak=$(hwm_mib "$D/rss")
echo "over the last ${SLOPE_WINDOW_S} s of the load: slope of peak RSS (VmHWM) $slope MiB/min, of VmRSS $raw_slope MiB/min; peak RSS $peak MiB"
account_table "$D"
echo

verdict "$([[ $slope != n/a ]] && le "$slope" "$MAX_SLOPE" || echo 0)" "peak RSS flat over the last ${SLOPE_WINDOW_S} s: slope <= $MAX_SLOPE MiB/min" "$slope MiB/min"
verdict "$(le "$peak" "$MAX_RSS_MIB")" "peak RSS (VmHWM) <= $MAX_RSS_MIB MiB" "$peak MiB"
verdict "$((unacc == 0 ? 1 : 0))" "every span, log, error stored or counted" "$unacc unaccounted"
verdict "$((twice == 0 ? 1 : 0))" "each item stored once (sent_items = stored, per category)" "$twice categories differ"
verdict "$([[ "$("$SINK" --query "$D/gen.json" http_errors)" == "{}" ]] && echo 1 || echo 0)" "the collector refused no request" "$("$SINK" --query "$D/gen.json" http_errors)"
verdict "$(($("$SINK" --query "$D/sink.json" invalid_envelopes) == 0 ? 1 : 0))" "no invalid envelope" "$("$SINK" --query "$D/sink.json" invalid_envelopes)"
log "collector stopped ${STOP_MS} ms after SIGTERM; counts after shutdown from the $FINAL_FROM"
finish flap "RSS flat while Sentry flaps, every item stored or counted"
