#!/usr/bin/env bash
# A receiver that answers every envelope 200 with HUGE_HEADER_BYTES (32 MiB) of headers, as
# a broken or hostile proxy in front of Sentry might (sentrysink --huge-headers), fed
# HUGEHEADERS_RATE (3,000) spans/s from HUGEHEADERS_PROJECTS (100) services, each routed to
# a project of its own, for HUGEHEADERS_DURATION (20 s), in each client configuration of
# HUGEHEADERS_CASES:
#   defaults  the exporter's defaults, telemetry level normal (net/http's transport unwrapped)
#   headers   one `headers:` entry (confighttp wraps the transport)
#   detailed  telemetry level detailed (otelhttp records, and wraps the transport)
#   http2     HTTPS with HTTP/2 (the sink's raw frames over TLS, a self-signed certificate
#             trusted with tls::ca_file); its header is HUGE_HEADER_BYTES_H2 (10 MiB - 4 KiB,
#             just under net/http's default HTTP/2 header list, which a larger one would pass).
#             The header is refused at its first frame, and the refusal ends the connection:
#             what holds the redials (a TLS handshake each; net/http keeps each failed
#             connection 5 s) is the gap between probes that get no answer (docs/memory.md).
# Samples the collector's RSS every 200 ms until 10 s after the traffic ends; each case fails
# when its peak (VmHWM) passes HUGEHEADERS_MAX_RSS_MB (512), or is not flat: when it grows by
# more than HUGEHEADERS_MAX_TAIL_GROWTH_MB (32) from 5 s to 10 s after the traffic. The memory
# budget fills all through the traffic (every envelope waits to retry), so the peak grows
# then; after it the envelopes held are still retried, and answered the same, so what grows
# once the last batches are in is what the answers hold.
# HUGEHEADERS_OTELCOL runs another build of the collector. Needs `make otelcol sink`.
# Everything listens on 127.0.0.1 only.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=faultlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/faultlib.sh" # routes_yaml, rss_at, now_ms
OTELCOL=${HUGEHEADERS_OTELCOL:-$OTELCOL}
CASES=${HUGEHEADERS_CASES:-defaults headers detailed http2}
PROJECTS=${HUGEHEADERS_PROJECTS:-100}
RATE=${HUGEHEADERS_RATE:-3000}
DURATION=${HUGEHEADERS_DURATION:-20s}
MAX_RSS_MB=${HUGEHEADERS_MAX_RSS_MB:-512}
MAX_GROWTH=${HUGEHEADERS_MAX_TAIL_GROWTH_MB:-32}

need_binaries
make_workdir hugeheaders
install_trap

# sample PID FILE: every 200 ms until PID exits, "unix_ms rss_kb hwm_kb" appended to FILE.
sample() {
	while kill -0 "$1" 2>/dev/null; do
		awk -v t="$(now_ms)" '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { if (r) print t, r, h }' \
			"/proc/$1/status" 2>/dev/null >>"$2" || true
		sleep 0.2
	done
}

declare -A PEAK GROWTH
failed=0

run_case() {
	local name=$1 dir="$WORKDIR/$1" sink_args=() scheme=http extra="" bytes=${HUGE_HEADER_BYTES:-33554432}
	mkdir -p "$dir"
	case "$name" in
	defaults | detailed) ;;
	headers) extra=$'headers:\n  X-Scope: gateway' ;;
	http2)
		bytes=${HUGE_HEADER_BYTES_H2:-10481664} scheme=https sink_args=(--tls-cert-file "$dir/ca.pem")
		extra=$'tls:\n  ca_file: '"$dir/ca.pem"
		;;
	*) die "unknown case $name (defaults, headers, detailed, http2)" ;;
	esac
	start sink "$dir/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$dir/sink.addr" --huge-headers "$bytes" "${sink_args[@]}"
	wait_addr_file "$dir/sink.addr" "$PID_sink" "$dir/sink.log"
	local sink_addr grpc http metrics
	sink_addr=$(<"$dir/sink.addr")
	read -r grpc http metrics <<<"$(free_ports 3)"
	extra+=$'\n'$(routes_yaml "$PROJECTS" "${sink_addr##*:}" | sed "s#http://#$scheme://#")
	write_collector_config "$dir/collector.yaml" "$grpc" "$http" "$metrics" "" "$extra"
	# The collector's default telemetry level, but for `detailed`: there otelhttp records,
	# and wraps the client's transport.
	[[ $name == detailed ]] || sed -i 's/level: detailed/level: normal/' "$dir/collector.yaml"
	start collector "$dir/collector.log" "$OTELCOL" --config "$dir/collector.yaml"
	wait_port "$http" "$PID_collector" "the collector (see $dir/collector.log)" 60
	wait_port "$metrics" "$PID_collector" "the collector's metrics endpoint" 30
	sample "$PID_collector" "$dir/rss" &
	local sampler=$!

	log "[$name] $RATE spans/s from $PROJECTS services for $DURATION; every answer $bytes bytes of headers ($scheme)"
	local t1
	start gen "$dir/gen.log" "$GEN" --endpoint "127.0.0.1:$http" --duration "$DURATION" --rate "$RATE" \
		--services "$PROJECTS" --workers 2 --quiet --summary-file "$dir/gen.json"
	wait "$PID_gen" || log "otlpgen reported failures (see $dir/gen.log)"
	forget_pid "$PID_gen"
	t1=$(now_ms)
	sleep 10
	scrape "$metrics" "$dir/metrics.prom"
	stop_pid "$PID_collector" 30
	forget_pid "$PID_collector"
	wait "$sampler" || true
	stop_pid "$PID_sink" 10
	forget_pid "$PID_sink"

	PEAK[$name]=$(awk '{ h = $3 } END { printf "%d\n", h / 1024 }' "$dir/rss")
	GROWTH[$name]=$(($(rss_at "$dir/rss" $((t1 + 10000)) hwm) - $(rss_at "$dir/rss" $((t1 + 5000)) hwm)))
	local gspans sent dropped
	read -r gspans _ <<<"$("$SINK" --query "$dir/gen.json" spans logs)"
	sent=$(metric_sum "$dir/metrics.prom" otelcol_exporter_sentry_sent_items 'category="span"')
	dropped=$(metric_sum "$dir/metrics.prom" otelcol_exporter_sentry_dropped_items 'category="span"')
	echo "[$name] spans sent by otlpgen $gspans; stored $sent, counted dropped $dropped 10 s after (the rest waits to retry)"
	grep -m1 -o 'server response headers exceeded[^"]*\|connection error: COMPRESSION_ERROR' "$dir/collector.log" || true
	echo "[$name] collector peak RSS ${PEAK[$name]} MiB; it grew by ${GROWTH[$name]} MiB from 5 s to 10 s after the traffic"
	if ((PEAK[$name] > MAX_RSS_MB)); then
		log "FAIL [$name]: peak RSS ${PEAK[$name]} MiB over $MAX_RSS_MB MiB"
		failed=1
	fi
	if ((GROWTH[$name] > MAX_GROWTH)); then
		log "FAIL [$name]: peak RSS not flat (grew ${GROWTH[$name]} MiB from 5 s to 10 s after the traffic, at most $MAX_GROWTH)"
		failed=1
	fi
}

for c in $CASES; do
	run_case "$c"
done
echo
printf '%-9s %14s %26s\n' case "peak RSS MiB" "growth 5-10 s after, MiB"
for c in $CASES; do
	printf '%-9s %14s %26s\n' "$c" "${PEAK[$c]}" "${GROWTH[$c]}"
done
((failed == 0)) || die "a case passed $MAX_RSS_MB MiB or still grew"
log "OK: every case's peak RSS within $MAX_RSS_MB MiB and flat"
