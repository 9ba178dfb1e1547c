#!/usr/bin/env bash
# make heal: issue 19's partition that heals, through the built collector. One project (a
# `dsn`, no routing), the exporter at its defaults, the batch processor; otlpgen sends
# HEAL_RATE (1,000) spans/s from one service (2 logs per trace, 10 % exceptions) for
# HEAL_DURATION (90 s). The sink hangs from HEAL_HANG_AT (0 s) after the first request it
# receives, for HEAL_HANG_FOR (30 s), then heals (sentrysink --hang-at/--hang-for): requests
# that arrived during the hang were held unanswered and are stored and answered at the heal
# (unless their client gave up first), and from then on it answers after FAULTS_SINK_DELAY
# (50 ms). In one-second buckets of the wall clock (the sink's and otlpgen's timelines):
#   offered(s)  spans otlpgen sent in second s (accepted by the collector or refused)
#   stored(s)   spans the sink stored in it
#   backlog(s)  spans accepted by the end of s and not yet stored (held by the collector)
# It fails unless:
#   - from HEAL_CATCH_UP (5 s) after the heal to the load's end, the stored spans keep up
#     with what arrives: in every whole second, stored >= offered, or, when it is below, no
#     backlog is left to catch up on (backlog <= HEAL_MAX_LAG_S (2) seconds of load: the
#     batch processor's 1 s and the answers' latency) and the collector refused nothing;
#   - every accepted span, log and error event is stored or counted (per category:
#     delivered = stored + otelcol_exporter_sentry_dropped_items, from the collector's final
#     metric export at shutdown), and each stored once (sent_items = stored);
#   - the sink saw no invalid envelope.
# It prints the per-second table around and after the heal.
#
# Environment: HEAL_DURATION (90s), HEAL_RATE (1000), HEAL_HANG_AT (0s), HEAL_HANG_FOR
# (30s), HEAL_CATCH_UP (5), HEAL_MAX_LAG_S (2), HEAL_SEED (1), HEAL_EXPORTER_YAML,
# FAULTS_SINK_DELAY (50ms), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=faultlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"

DURATION_S=$(secs "${HEAL_DURATION:-90s}")
RATE=${HEAL_RATE:-1000}
HANG_AT_S=$(secs "${HEAL_HANG_AT:-0s}")
HANG_FOR_S=$(secs "${HEAL_HANG_FOR:-30s}")
CATCH_UP_S=${HEAL_CATCH_UP:-5}
MAX_LAG_S=${HEAL_MAX_LAG_S:-2}
SEED=${HEAL_SEED:-1}
((HANG_AT_S + HANG_FOR_S + CATCH_UP_S + 5 <= DURATION_S)) || die "HEAL_DURATION must leave at least 5 s after the heal and the catch-up"

need_binaries
make_workdir heal
install_trap
D=$WORKDIR

start_fault_sink "$D" --delay "$FAULTS_SINK_DELAY" --hang-at "${HANG_AT_S}s" --hang-for "${HANG_FOR_S}s"
start_fault_collector "$D" "$SINK_PORT" "${HEAL_EXPORTER_YAML:-}"

log "heal: ${DURATION_S}s of $RATE spans/s; Sentry hangs ${HANG_FOR_S}s from ${HANG_AT_S}s after the first request, then answers after $FAULTS_SINK_DELAY"
run_gen "$D" --duration "${DURATION_S}s" --rate "$RATE" --services 1 --logs-per-trace 2 --exception-ratio 0.1 \
	--workers 2 --batch 100 --seed "$SEED"
wait_drained "$METRICS_PORT" "$D/sink.json" 60
stop_collector "$D"
stop_pid "$PID_sink" 10

origin=$("$SINK" --query "$D/sink.json" fault_origin_unix_ms)
((origin > 0)) || die "the sink received no request"
HEAL_MS=$((origin + (HANG_AT_S + HANG_FOR_S) * 1000))
first=$(((HEAL_MS + CATCH_UP_S * 1000 + 999) / 1000)) # the first whole second from heal + catch-up
last=$((LOAD_END_MS / 1000 - 1))                      # the last whole second of the load
max_lag=$((MAX_LAG_S * RATE))

# one line per second: sec offered stored backlog refused
awk -v gc_s="$(tl_col "$D/gen.tl" spans)" -v gc_f="$(tl_col "$D/gen.tl" failed_spans)" -v sc="$(tl_col "$D/sink.tl" spans)" '
	FNR == 1 { file++ }
	/^#/ { next }
	{ if (lo == "" || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
	file == 1 { acc[$1] = $gc_s; ref[$1] = $gc_f }
	file == 2 { sto[$1] = $sc }
	END {
		for (s = lo; s <= hi; s++) {
			ca += acc[s]; cs += sto[s]
			print s, acc[s] + ref[s], sto[s] + 0, ca - cs, ref[s] + 0
		}
	}' "$D/gen.tl" "$D/sink.tl" >"$D/buckets"

echo
echo "=== heal: Sentry hung ${HANG_FOR_S}s, then answered; $RATE spans/s for ${DURATION_S}s"
echo "heal at +$(((HEAL_MS - LOAD_START_MS) / 1000))s into the load; checked from heal+${CATCH_UP_S}s ($((first - HEAL_MS / 1000))s after the heal's second) to the load's end; backlog allowed when stored < offered: $max_lag spans"
printf '%8s %9s %9s %9s %8s  %s\n' "t-heal" offered stored backlog refused ""
bad=0 checked=0 caught=-1
while read -r s off sto back ref; do
	rel=$((s - HEAL_MS / 1000))
	((s >= HEAL_MS / 1000 - 5 && s <= last + 1)) || continue
	mark=""
	if ((s >= first && s <= last)); then
		checked=$((checked + 1))
		if ((sto >= off || (back <= max_lag && ref == 0))); then
			mark=ok
		else
			mark=BEHIND
			bad=$((bad + 1))
		fi
	fi
	((caught >= 0 || rel < 0 || back > max_lag)) || caught=$rel
	printf '%8s %9s %9s %9s %8s  %s\n' "$rel" "$off" "$sto" "$back" "$ref" "$mark"
done <"$D/buckets"
echo "backlog back within $max_lag spans $([[ $caught -ge 0 ]] && echo "${caught}s after the heal" || echo "never, before the load ended")"
echo
account_table "$D"
echo

verdict "$((checked > 0 && bad == 0 ? 1 : 0))" "from heal+${CATCH_UP_S}s, stored keeps up with offered, each second" "$bad of $checked seconds behind"
verdict "$((unacc == 0 ? 1 : 0))" "every accepted span, log, error stored or counted" "$unacc unaccounted"
verdict "$((twice == 0 ? 1 : 0))" "each item stored once (sent_items = stored, per category)" "$twice categories differ"
verdict "$(($("$SINK" --query "$D/sink.json" invalid_envelopes) == 0 ? 1 : 0))" "no invalid envelope" "$("$SINK" --query "$D/sink.json" invalid_envelopes)"
log "refused by the collector: $("$SINK" --query "$D/gen.json" failed_spans) spans, $("$SINK" --query "$D/gen.json" failed_logs) logs; held at most $("$SINK" --query "$D/sink.json" max_held) requests; collector stopped ${STOP_MS} ms after SIGTERM; counts after shutdown from the $FINAL_FROM"
finish heal "after a ${HANG_FOR_S}s hang, stored spans keep up within ${CATCH_UP_S}s of the heal; every item stored or counted"
