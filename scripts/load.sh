#!/usr/bin/env bash
# make load: throughput of the collector's Sentry exporter against a sink that answers
# every envelope after 50 ms. Three runs of LOAD_DURATION (default 30s) each, spans only:
#   default   the exporter at its default settings (max_concurrent_requests 128)
#   wide      max_concurrent_requests: LOAD_WIDE (256): how far more in flight goes here
#   single    max_concurrent_requests: 1, the single-worker peer (~20 envelopes/s at 50 ms)
# and a table of envelopes/s and spans/s accepted by the sink (measured after a warm-up)
# with the ratios to the single-worker peer. Everything listens on 127.0.0.1 only.
#
# The pipelines have no processor by default, so a full exporter queue pushes back on
# otlpgen (its http_errors) instead of being hidden by the batch processor.
#
# Environment: LOAD_DURATION (30s), LOAD_RATE (spans/s offered, 20000, well above what
# either sender can deliver; 0 = as fast as possible), LOAD_DELAY (sink latency, 50ms),
# LOAD_WORKERS (otlpgen senders, 4), LOAD_WARMUP (seconds excluded from the rate, 5),
# LOAD_PROCESSORS (pipeline processors, "" or e.g. "batch"), LOAD_WIDE (256; 0 skips
# that run), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${LOAD_DURATION:-30s}
RATE=${LOAD_RATE:-20000}
DELAY=${LOAD_DELAY:-50ms}
WORKERS=${LOAD_WORKERS:-4}
WARMUP=${LOAD_WARMUP:-5}
PROCESSORS=${LOAD_PROCESSORS-}
WIDE=${LOAD_WIDE:-256}

need_binaries
make_workdir load
install_trap

# to_seconds 30s|2m|45 -> whole seconds
to_seconds() {
	local d=$1
	case "$d" in
	*ms) echo 1 ;;
	*s) echo "${d%s}" ;;
	*m) echo $((${d%m} * 60)) ;;
	*h) echo $((${d%h} * 3600)) ;;
	*) echo "$d" ;;
	esac
}
DURATION_S=$(to_seconds "$DURATION")
((DURATION_S > WARMUP + 2)) || die "LOAD_DURATION must be longer than LOAD_WARMUP+2 (${WARMUP}s)"

declare -A RESULT

# run NAME EXTRA_EXPORTER_YAML: one measurement; fills RESULT[NAME.*].
run() {
	local name=$1 extra=$2 dir="$WORKDIR/$1"
	mkdir -p "$dir"
	start sink "$dir/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$dir/sink.addr" \
		--delay "$DELAY" --quiet --stats-every 10s --summary-file "$dir/sink.json"
	wait_addr_file "$dir/sink.addr" "$PID_sink" "$dir/sink.log"
	local sink_addr grpc http metrics
	sink_addr=$(<"$dir/sink.addr")
	read -r grpc http metrics <<<"$(free_ports 3)"
	write_collector_config "$dir/collector.yaml" "$grpc" "$http" "$metrics" "${sink_addr##*:}" "$extra" "$PROCESSORS"
	start collector "$dir/collector.log" "$OTELCOL" --config "$dir/collector.yaml"
	wait_port "$http" "$PID_collector" "the collector (see $dir/collector.log)" 60

	log "[$name] $DURATION of spans (rate ${RATE:-0}, sink delay $DELAY)"
	start gen "$dir/gen.log" "$GEN" --endpoint "127.0.0.1:$http" --duration "$DURATION" --rate "$RATE" \
		--logs-per-trace 0 --exception-ratio 0 --workers "$WORKERS" --batch 500 --quiet \
		--summary-file "$dir/gen.json"
	local gen_pid=$PID_gen
	nap "$WARMUP"
	local e0 s0 t0 e1 s1 t1
	read -r e0 s0 t0 <<<"$("$SINK" --query "$dir/sink.json" envelopes spans uptime_seconds)"
	# the summary file is rewritten every second; sample it just before otlpgen stops
	nap $((DURATION_S - WARMUP - 1))
	read -r e1 s1 t1 <<<"$("$SINK" --query "$dir/sink.json" envelopes spans uptime_seconds)"
	scrape "$metrics" "$dir/metrics.prom"
	local i
	for ((i = 0; i < 300; i++)); do
		kill -0 "$gen_pid" 2>/dev/null || break
		sleep 0.1
	done
	stop_pid "$gen_pid" 5
	stop_pid "$PID_collector" 5 # a full queue at 20 envelopes/s would take minutes to drain
	stop_pid "$PID_sink" 10

	RESULT[$name.env_s]=$(awk -v a="$e0" -v b="$e1" -v t="$t0" -v u="$t1" 'BEGIN { d = u - t; printf "%.1f", (d > 0 ? (b - a) / d : 0) }')
	RESULT[$name.spans_s]=$(awk -v a="$s0" -v b="$s1" -v t="$t0" -v u="$t1" 'BEGIN { d = u - t; printf "%.0f", (d > 0 ? (b - a) / d : 0) }')
	RESULT[$name.gen]=$(tail -n 1 "$dir/gen.log")
	RESULT[$name.dropped]=$(($(metric_sum "$dir/metrics.prom" otelcol_exporter_sentry_dropped_items) - $(metric_sum "$dir/metrics.prom" otelcol_exporter_sentry_dropped_items 'category="log_byte"')))
	RESULT[$name.queue]=$(metric_sum "$dir/metrics.prom" otelcol_exporter_queue_size)
	RESULT[$name.invalid]=$("$SINK" --query "$dir/sink.json" invalid_envelopes)
	log "[$name] ${RESULT[$name.env_s]} envelopes/s, ${RESULT[$name.spans_s]} spans/s at the sink"
}

run default ""
if ((WIDE > 0)); then
	run wide "max_concurrent_requests: $WIDE"
fi
run single "max_concurrent_requests: 1"

# ratio A B: A/B as "12.3x", or n/a
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else printf "n/a" }'; }

echo
printf '%-34s %12s %10s %12s %8s %10s\n' "sender (sink delay $DELAY)" "envelopes/s" "spans/s" "queue@end" "invalid" "vs single"
row() {
	printf '%-34s %12s %10s %12s %8s %10s\n' "$2" "${RESULT[$1.env_s]}" "${RESULT[$1.spans_s]}" "${RESULT[$1.queue]}" "${RESULT[$1.invalid]}" \
		"$(ratio "${RESULT[$1.env_s]}" "${RESULT[single.env_s]}")"
}
row default "default (max_concurrent 128)"
if ((WIDE > 0)); then
	row wide "max_concurrent_requests: $WIDE"
fi
row single "max_concurrent_requests: 1"
echo
for name in default wide single; do
	[[ -n "${RESULT[$name.gen]-}" ]] || continue
	printf 'otlpgen, %-8s %s\n' "$name:" "${RESULT[$name.gen]}"
done
for name in default wide single; do
	if [[ -n "${RESULT[$name.invalid]-}" && "${RESULT[$name.invalid]}" != 0 ]]; then
		die "the sink saw invalid envelopes ($name)"
	fi
done
