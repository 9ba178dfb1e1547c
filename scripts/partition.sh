#!/usr/bin/env bash
# make partition: issue 19's partition through the built collector, held long enough to
# reach its plateau. 100 services (otlpgen --services 100, 2 logs per trace, 10 %
# exceptions, as bounds.sh), each routed by routing.dsns to its own project, the batch
# processor, the exporter at its defaults; PARTITION_RATE (3,000) spans/s for
# PARTITION_DURATION (3 min) per case:
#   hung       every project's Sentry accepts each request and never answers (--hang)
#   blackhole  every project's connects never complete (--blackhole: a full accept queue)
#   large-hung, large-blackhole  the same faults offered items near Relay's limits
#              (otlpgen --large: one service per request, about 48-record log batches of
#              16 kB bodies, 48 KiB stack traces, exception events near 1 MB, roots with
#              32 kB of attributes; 2 % exceptions) at PARTITION_LARGE_RATE (300) spans/s,
#              about 8 MB/s of OTLP
# The collector's RSS is sampled every second from /proc/PID/status. Each case fails unless:
#   - peak RSS (VmHWM) <= PARTITION_MAX_RSS_MIB (512), docs/memory.md's bound;
#   - peak RSS is flat over the last third of the load (the last minute at 3 min): the
#     least-squares slope of the peak RSS so far (VmHWM), as make flap fits it, is at most
#     PARTITION_MAX_SLOPE MiB/min (32; see docs/faults.md for why this threshold). VmRSS
#     swings with each GC cycle (by 40-80 MiB with 1 MB items), which tilts its one-minute
#     slope either way on flat runs; its slope is printed beside;
#   - every span, log, error event, trace metric and profile chunk otlpgen delivered is stored
#     or counted (the ordinary cases also export every service's metrics every 10 s, all six
#     OTLP kinds, and each service a CPU profile every 10 s; the large cases 5 services' CPU
#     profiles of about 3 MB of OTLP, 7 MB of chunks, every 10 s): per category,
#     delivered = stored by the sink + otelcol_exporter_sentry_dropped_items (summed over
#     projects and reasons) from the collector's final metric export at shutdown; the
#     sums over the final client reports logged at shutdown (bounds.sh's check) are printed;
#   - the collector refused no request (otlpgen saw no failure);
#   - the collector exits within 10 s of SIGTERM.
# Then a table per case: RSS every 30 s, peak, slope, stop time, what was counted.
#
# Environment: PARTITION_DURATION (3m), PARTITION_RATE (3000), PARTITION_LARGE_RATE (300),
# PARTITION_CASES ("hung blackhole large-hung large-blackhole"), PARTITION_MAX_RSS_MIB (512),
# PARTITION_MAX_SLOPE (MiB/min, 32),
# PARTITION_SEED (1), PARTITION_PROFILES_INTERVAL (10s; 0: no profiles), PARTITION_PROFILES_PER_REQUEST (100: services whose profiles share a request; 100 is a whole fleet in one), PARTITION_EXPORTER_YAML (more exporter settings), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=faultlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh"

DURATION_S=$(secs "${PARTITION_DURATION:-3m}")
RATE=${PARTITION_RATE:-3000}
LARGE_RATE=${PARTITION_LARGE_RATE:-300}
CASES=${PARTITION_CASES:-hung blackhole large-hung large-blackhole}
MAX_RSS_MIB=${PARTITION_MAX_RSS_MIB:-512}
MAX_SLOPE=${PARTITION_MAX_SLOPE:-32}
SEED=${PARTITION_SEED:-1}
PROFILES_INTERVAL=${PARTITION_PROFILES_INTERVAL:-10s}
PROFILES_PER_REQUEST=${PARTITION_PROFILES_PER_REQUEST:-100}
PROJECTS=100

export COLLECTOR_PROFILES=1 # the profiles pipeline (scripts/lib.sh)
need_binaries
make_workdir partition
install_trap

declare -A R

# final_report_sum FILE CATEGORY: the sum over projects and reasons of CATEGORY in the final
# client report lines of a collector log.
final_report_sum() {
	{ grep 'Final Sentry client report' "$1" | grep -oE "\"[a-z_]+\.$2\": [0-9]+" || true; } | awk '{ s += $2 } END { print s + 0 }'
}

# mib_of PROM NAME: the metric's sum in MiB.
mib_of() {
	awk -v v="$(metric_sum "$1" "$2")" 'BEGIN { printf "%.0f", v / 1048576 }'
}

run_case() {
	local name=$1 dir="$WORKDIR/$1" sink_arg rate=$RATE gen_args=(--exception-ratio 0.1 --batch 100 --metrics-interval 10s --profiles-interval "$PROFILES_INTERVAL" --profiles-per-request "$PROFILES_PER_REQUEST")
	mkdir -p "$dir"
	case "$name" in
	hung | large-hung) sink_arg=--hang ;;
	blackhole | large-blackhole) sink_arg=--blackhole ;;
	*) die "unknown case $name (hung, blackhole, large-hung, large-blackhole)" ;;
	esac
	[[ "$name" != large-* ]] || rate=$LARGE_RATE gen_args=(--large --exception-ratio 0.02 --batch 84 --profiles-interval "$PROFILES_INTERVAL" --profile-services 5)
	start_fault_sink "$dir" "$sink_arg"
	local sink_pid=$PID_sink
	start_fault_collector "$dir" "" "$(routes_yaml "$PROJECTS" "$SINK_PORT")${PARTITION_EXPORTER_YAML:+$'\n'$PARTITION_EXPORTER_YAML}"
	rss_series "$PID_collector" "$dir/rss"

	log "[$name] ${DURATION_S}s of $rate spans/s from $PROJECTS services, every project's Sentry ${name#large-}"
	run_gen "$dir" --duration "${DURATION_S}s" --rate "$rate" --services "$PROJECTS" --logs-per-trace 2 \
		--workers 2 --seed "$SEED" "${gen_args[@]}"
	nap 2 # what is in flight stays in flight
	local held=n/a
	[[ "$name" == *blackhole ]] || held=$("$SINK" --query "$dir/sink.json" max_held)
	stop_collector "$dir"
	stop_rss
	stop_pid "$sink_pid" 10

	local from=$((LOAD_END_MS - DURATION_S * 1000 / 3))
	R[$name.hwm]=$(hwm_mib "$dir/rss")
	# Each GC cycle swings VmRSS, which tilts a one-minute least-squares line of it either way
	# on flat runs (-46 to +32 MiB/min with items near 1 MB; 21.8 MiB/min once in CI with
	# ordinary items): every case fits the peak RSS so far (VmHWM), as make flap does, which a
	# swing below the peak leaves flat and any growth past it does not.
	local slope_of="peak RSS"
	R[$name.slope]=$(rss_slope "$dir/rss" "$from" "$LOAD_END_MS" hwm)
	R[$name.stop]=$STOP_MS
	echo
	R[$name.mbps]=$(awk -v b="$("$SINK" --query "$dir/gen.json" bytes)" -v s="$DURATION_S" 'BEGIN { printf "%.1f", b / s / 1e6 }')
	echo "=== $name: $PROJECTS projects, ${DURATION_S}s at $rate spans/s (${R[$name.mbps]} MB/s of OTLP)"
	local t line=""
	for ((t = 30; t <= DURATION_S; t += 30)); do
		line+=$(printf ' %ds=%d' "$t" "$(rss_at "$dir/rss" $((LOAD_START_MS + t * 1000)))")
	done
	echo "RSS MiB by time into the load:$line"
	echo "$slope_of slope over the last third (last $((DURATION_S / 3)) s): ${R[$name.slope]} MiB/min (VmRSS: $(rss_slope "$dir/rss" "$from" "$LOAD_END_MS") MiB/min); max RSS in it $(rss_max "$dir/rss" "$from" "$LOAD_END_MS") MiB; requests held at most: $held"
	echo "at the end of the load (last scrape): memory_held_bytes $(mib_of "$dir/last.prom" otelcol_exporter_sentry_memory_held_bytes) MiB of memory_limit_bytes $(mib_of "$dir/last.prom" otelcol_exporter_sentry_memory_limit_bytes) MiB; Go heap $(mib_of "$dir/last.prom" otelcol_process_runtime_heap_alloc_bytes) MiB; RSS $(mib_of "$dir/last.prom" otelcol_process_memory_rss) MiB"
	printf '%-9s %10s %10s %10s %12s %14s\n' category delivered stored dropped unaccounted "final reports"
	local c in stored dropped sent unacc=0 u
	while read -r c in stored dropped sent; do
		u=$((in - stored - dropped))
		unacc=$((unacc + (u < 0 ? -u : u)))
		printf '%-9s %10s %10s %10s %12s %14s\n' "$c" "$in" "$stored" "$dropped" "$u" "$(final_report_sum "$dir/collector.log" "$c")"
	done < <(items_by_category "$dir/final.prom" "$dir/gen.json" "$dir/sink.json")
	R[$name.unacc]=$unacc
	echo "dropped by category/reason (from the $FINAL_FROM): $(dropped_by "$dir/final.prom")"
	verdict "$(le "${R[$name.hwm]}" "$MAX_RSS_MIB")" "[$name] peak RSS (VmHWM) <= $MAX_RSS_MIB MiB" "${R[$name.hwm]} MiB"
	verdict "$([[ ${R[$name.slope]} != n/a ]] && le "${R[$name.slope]}" "$MAX_SLOPE" || echo 0)" "[$name] $slope_of flat over the last third: slope <= $MAX_SLOPE MiB/min" "${R[$name.slope]} MiB/min"
	verdict "$((unacc == 0 ? 1 : 0))" "[$name] every span, log, error, trace metric, profile chunk stored or counted" "$unacc unaccounted"
	verdict "$([[ "$("$SINK" --query "$dir/gen.json" http_errors)" == "{}" ]] && echo 1 || echo 0)" "[$name] the collector refused no request" "$("$SINK" --query "$dir/gen.json" http_errors), slowest answer $("$SINK" --query "$dir/gen.json" slowest_request_ms) ms"
	verdict "$((STOP_MS <= FAULTS_STOP_S * 1000 ? 1 : 0))" "[$name] exit within ${FAULTS_STOP_S} s of SIGTERM" "$STOP_MS ms"
}

for c in $CASES; do
	run_case "$c"
done

echo
echo "partition: $PROJECTS projects, ${DURATION_S}s per case ($RATE spans/s; large: $LARGE_RATE), exporter defaults"
printf '%-16s %8s %10s %18s %10s %12s\n' case "OTLP MB/s" "peak MiB" "slope MiB/min" "stop ms" unaccounted
for c in $CASES; do
	printf '%-16s %8s %10s %18s %10s %12s\n' "$c" "${R[$c.mbps]}" "${R[$c.hwm]}" "${R[$c.slope]}" "${R[$c.stop]}" "${R[$c.unacc]}"
done
echo
finish partition "RSS bounded and flat with every project hung or black-holed, every item stored or counted, exit within ${FAULTS_STOP_S} s"
