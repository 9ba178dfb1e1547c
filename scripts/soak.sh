#!/usr/bin/env bash
# make soak: memory and queue behaviour of the collector's Sentry exporter under sustained
# high-rate spans, SOAK_DURATION (default 180s) per scenario:
#   ratelimit  the sink answers 429 with X-Sentry-Rate-Limits: 60::organization
#   slow       the sink answers after 500 ms
#   nolimit    the sink answers at once
# Every SOAK_INTERVAL (10 s) it records the collector's RSS (/proc/<pid>/status VmRSS),
# Go heap (otelcol_process_runtime_heap_alloc_bytes), exporter queue size
# (otelcol_exporter_queue_size), requests the sink received and the exporter's sent and
# dropped item counters, into soak-results/<scenario>.csv, then prints a summary.
# Everything listens on 127.0.0.1 only; every loop is bounded.
#
# The pipelines have no processor by default (SOAK_PROCESSORS="memory_limiter, batch" adds
# them), so the exporter queue is what bounds memory and a full queue pushes back on otlpgen.
#
# Environment: SOAK_DURATION (180s), SOAK_INTERVAL (10), SOAK_RATE (spans/s, 5000),
# SOAK_SCENARIOS ("ratelimit slow nolimit"), SOAK_RESULTS (./soak-results),
# SOAK_PROCESSORS (""), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DURATION=${SOAK_DURATION:-180s}
INTERVAL=${SOAK_INTERVAL:-10}
RATE=${SOAK_RATE:-5000}
SCENARIOS=${SOAK_SCENARIOS:-ratelimit slow nolimit}
RESULTS=${SOAK_RESULTS:-$ROOT/soak-results}
PROCESSORS=${SOAK_PROCESSORS-}

case "$DURATION" in
*m) DURATION_S=$((${DURATION%m} * 60)) ;;
*s) DURATION_S=${DURATION%s} ;;
*) DURATION_S=$DURATION ;;
esac
[[ "$DURATION_S" =~ ^[0-9]+$ && "$DURATION_S" -ge "$INTERVAL" ]] || die "SOAK_DURATION must be whole seconds or minutes, at least SOAK_INTERVAL"

need_binaries
make_workdir soak
install_trap
mkdir -p "$RESULTS"

declare -A SUMMARY

# scenario NAME SINK_FLAGS...: one soak run.
scenario() {
	local name=$1 dir="$WORKDIR/$1" csv="$RESULTS/$1.csv"
	shift
	mkdir -p "$dir"
	start sink "$dir/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$dir/sink.addr" \
		--quiet --stats-every 30s --summary-file "$dir/sink.json" "$@"
	wait_addr_file "$dir/sink.addr" "$PID_sink" "$dir/sink.log"
	local sink_addr grpc http metrics
	sink_addr=$(<"$dir/sink.addr")
	read -r grpc http metrics <<<"$(free_ports 3)"
	write_collector_config "$dir/collector.yaml" "$grpc" "$http" "$metrics" "${sink_addr##*:}" "" "$PROCESSORS"
	start collector "$dir/collector.log" "$OTELCOL" --config "$dir/collector.yaml"
	local col=$PID_collector
	wait_port "$http" "$col" "the collector (see $dir/collector.log)" 60
	wait_port "$metrics" "$col" "the collector's metrics endpoint" 30

	log "[$name] sink $* ; $DURATION of $RATE spans/s"
	start gen "$dir/gen.log" "$GEN" --endpoint "127.0.0.1:$http" --duration "${DURATION_S}s" --rate "$RATE" \
		--logs-per-trace 1 --exception-ratio 0.02 --workers 4 --batch 500 --quiet \
		--summary-file "$dir/gen.json"
	local gen=$PID_gen

	echo "elapsed_s,rss_kb,heap_alloc_bytes,queue_size,sink_requests,sink_envelopes,sink_429,sent_items,dropped_items,send_failed_spans,refused_spans" >"$csv"
	local samples=$((DURATION_S / INTERVAL)) n t0 now elapsed rss heap queue req env r429 sent dropped failed refused
	local max_rss=0 max_heap=0 max_queue=0 m="$dir/metrics.prom"
	t0=$(date +%s)
	for ((n = 1; n <= samples; n++)); do
		# sleep until the n-th tick, so slow scrapes do not accumulate
		now=$(date +%s)
		if ((t0 + n * INTERVAL > now)); then nap $((t0 + n * INTERVAL - now)); fi
		kill -0 "$col" 2>/dev/null || die "[$name] the collector died (see $dir/collector.log)"
		elapsed=$(($(date +%s) - t0))
		rss=$(rss_kb "$col")
		scrape "$metrics" "$m"
		heap=$(metric_sum "$m" otelcol_process_runtime_heap_alloc_bytes)
		queue=$(metric_sum "$m" otelcol_exporter_queue_size)
		# items, not bytes: leave out the log_byte category
		sent=$(($(metric_sum "$m" otelcol_exporter_sentry_sent_items) - $(metric_sum "$m" otelcol_exporter_sentry_sent_items 'category="log_byte"')))
		dropped=$(($(metric_sum "$m" otelcol_exporter_sentry_dropped_items) - $(metric_sum "$m" otelcol_exporter_sentry_dropped_items 'category="log_byte"')))
		failed=$(metric_sum "$m" otelcol_exporter_send_failed_spans)
		refused=$(metric_sum "$m" otelcol_receiver_refused_spans)
		read -r req env r429 <<<"$("$SINK" --query "$dir/sink.json" requests envelopes requests_by_status.429)"
		echo "$elapsed,$rss,$heap,$queue,$req,$env,$r429,$sent,$dropped,$failed,$refused" >>"$csv"
		printf '  [%s] t=%3ss rss=%6d MiB heap=%6d MiB queue=%7s sink_requests=%8s sent=%10s dropped=%10s\n' \
			"$name" "$elapsed" $((rss / 1024)) $((heap / 1048576)) "$queue" "$req" "$sent" "$dropped"
		((rss > max_rss)) && max_rss=$rss
		((heap > max_heap)) && max_heap=$heap
		((queue > max_queue)) && max_queue=$queue
	done

	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$gen" 2>/dev/null || break
		sleep 0.1
	done
	stop_pid "$gen" 5
	stop_pid "$col" 15
	stop_pid "$PID_sink" 10
	local invalid
	invalid=$("$SINK" --query "$dir/sink.json" invalid_envelopes)
	SUMMARY[$name]=$(printf '%-10s %10d %10d %10d %12s %12s %12s %8s' "$name" $((max_rss / 1024)) $((max_heap / 1048576)) \
		"$max_queue" "$req" "$sent" "$dropped" "$invalid")
	SUMMARY[$name.gen]=$(tail -n 1 "$dir/gen.log")
	[[ "$invalid" == 0 ]] || log "[$name] the sink saw $invalid invalid envelopes"
}

for s in $SCENARIOS; do
	case "$s" in
	ratelimit) scenario ratelimit --rate-limit 60::organization ;;
	slow) scenario slow --delay 500ms ;;
	nolimit) scenario nolimit ;;
	*) die "unknown scenario $s (ratelimit, slow, nolimit)" ;;
	esac
done

echo
echo "soak: $DURATION per scenario at $RATE spans/s offered; CSVs in $RESULTS/"
printf '%-10s %10s %10s %10s %12s %12s %12s %8s\n' scenario "maxRSS_MiB" "maxHeapMiB" "max_queue" "sink_reqs" "sent_items" "dropped" "invalid"
for s in $SCENARIOS; do
	echo "${SUMMARY[$s]}"
done
echo
for s in $SCENARIOS; do
	echo "otlpgen, $s: ${SUMMARY[$s.gen]}"
done
