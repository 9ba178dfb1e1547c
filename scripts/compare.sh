#!/usr/bin/env bash
# make compare: the cost per span and per log record of the Sentry exporter against the
# stock otlphttp exporter, side by side in ONE collector binary (bin/otelcol-compare, built
# by ocb from builder-compare.yaml), on the same input, at default settings.
#
# Each round runs, one after the other and in alternating order, a fresh collector with
#   otlp receiver -> sentry exporter (defaults)     -> cmd/sentrysink (strict, answers at once)
#   otlp receiver -> otlp_http exporter (defaults)  -> cmd/otlpsink  (counts bytes and items)
# and a fixed input from otlpgen, carrying the attributes real instrumentation sets (issue 33:
# on lean traffic the exporter looked cheaper than users find it): request-shaped traces of 10
# spans for the span rows (an http.server root with method, route, path, scheme,
# server.address, user agent, client address and status code; db children with
# db.system.name, db.namespace, db.operation.name and ~90-character SQL; http.client
# children with url.full, server.address, server.port and a status; a resource with
# service.version, deployment.environment.name, host.name and telemetry.sdk.*; 1 trace in 20
# failing with an exception event and its stack trace), then logs with trace context, their
# call site (code.*), request and application-like bodies for the log rows; and the Sentry
# exporter once more with traces_as: spans. After COMPARE_WARMUP seconds it reads the collector's CPU time
# (utime+stime in /proc/<pid>/stat) over COMPARE_WINDOW seconds, and the sink's items and
# wire bytes over the same window (from its summary file, which carries its own clock).
# It prints, as medians over the rounds: CPU per span, CPU per log record, bytes on the wire
# per span and per log record, with the ratios sentry/otlphttp; and, with the metrics modes, CPU
# per metric data point (otlpgen --signals metrics: every OTLP kind, cumulative, as an SDK
# exports them; the Sentry sink's trace metric items are turned back into data points by
# otlpgen's own ratio of points to items); and, with the profiles modes, CPU per profile
# sample (otlpgen --signals profiles: every service's CPU samples as the eBPF profiler
# exports them, COMPARE_PROFILES_RATE (4,000) samples/s, through the profiles pipeline under
# the collector's service.profilesSupport gate; otlphttp posts them to /v1development/profiles,
# which cmd/otlpsink counts). Then one throughput run:
# envelopes/s at a 50 ms round trip with the exporter's defaults (COMPARE_THROUGHPUT=0 skips it).
#
# CPU per item = (collector CPU seconds / wall seconds) / (items per second at the sink), so
# a run whose exporter falls behind shows as a lower rate, not as a cheaper item.
# Everything listens on 127.0.0.1 only. Not run in CI (it measures; it does not check much).
#
# Environment: COMPARE_ROUNDS (3), COMPARE_RATE (items/s offered, 10000; the issue used 20000),
# COMPARE_METRICS_RATE (data points/s offered in the metrics modes, 1500: each becomes 2 to 3
# trace metrics of ~700 bytes, which the strict sink must keep up with), COMPARE_WARMUP (4),
# COMPARE_WINDOW (10), COMPARE_MODES (all: "sentry otlphttp sentry-spans sentry-logs
# otlphttp-logs"; two more split the protocol's price from the exporter's: otlphttp-pertrace,
# the otlphttp exporter batching COMPARE_SPANS spans a request, as many requests as Sentry's one
# transaction per envelope asks, each compressed with zstd as the Sentry exporter's are
# (COMPARE_PERTRACE_COMPRESSION=gzip: otlphttp's default); otlphttp-logs-per100, the same at
# 100 log records a request, the most Relay is built for in one envelope; and
# sentry-logs-noerrors, the logs without error events from exception records,
# error_events::from_logs false), COMPARE_SENTRY_EXTRA (YAML added to the sentry exporter, e.g.
# "compression: gzip"), COMPARE_OTELCOL (another build of the compare collector, e.g. an older
# commit's), COMPARE_PROFILE=DIR (one extra run per sentry mode with a
# COMPARE_WINDOW-second CPU profile and an allocation profile from the pprof extension into
# DIR), COMPARE_ALT (a second build of the compare collector, e.g. an older commit's: a mode
# with the suffix @alt in COMPARE_MODES, such as "sentry@alt", runs it, alternating with the
# others, and gets rows of its own), COMPARE_SPANS (spans per trace, 10; 3 or more), COMPARE_TLS=1 (both sinks serve HTTPS with
# a self-signed certificate the exporters trust through tls::ca_file; HTTP/2 unless the
# exporter's settings say otherwise), COMPARE_PERF=DIR (one extra run per mode under
# `perf record -e cpu-clock -g`, its samples by stage of the pipeline with perfstages.awk into
# DIR/<mode>.stages), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OTELCOL=${COMPARE_OTELCOL:-$BIN/otelcol-compare}
ALT=${COMPARE_ALT:-}
OSINK="$BIN/otlpsink"
ROUNDS=${COMPARE_ROUNDS:-3}
RATE=${COMPARE_RATE:-10000}
METRICS_RATE=${COMPARE_METRICS_RATE:-1500}
WARMUP=${COMPARE_WARMUP:-4}
WINDOW=${COMPARE_WINDOW:-10}
MODES=${COMPARE_MODES:-sentry otlphttp sentry-spans sentry-logs otlphttp-logs sentry-metrics otlphttp-metrics sentry-profiles otlphttp-profiles}
PROFILES_RATE=${COMPARE_PROFILES_RATE:-4000}
SENTRY_EXTRA=${COMPARE_SENTRY_EXTRA:-}
PROFILE_DIR=${COMPARE_PROFILE:-}
SPANS=${COMPARE_SPANS:-10}
TLS=${COMPARE_TLS:-0}
PERF_DIR=${COMPARE_PERF:-}
PERTRACE_COMPRESSION=${COMPARE_PERTRACE_COMPRESSION:-zstd}
PERF_EVENTS=context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_nanosleep
TICKS=$(getconf CLK_TCK)

for b in "$OTELCOL" "$SINK" "$GEN" "$OSINK"; do
	[[ -x "$b" ]] || die "$b is missing; run 'make compare' (it builds them)"
done
make_workdir compare
install_trap
[[ -z "$PROFILE_DIR" ]] || mkdir -p "$PROFILE_DIR"
if [[ -n "$PERF_DIR" ]]; then
	command -v perf >/dev/null || die "COMPARE_PERF needs perf (Debian: linux-perf)"
	mkdir -p "$PERF_DIR"
fi

# cpu_ticks PID: utime+stime of PID in clock ticks. Fields counted after the ")" that ends
# the command name, which may itself hold spaces.
cpu_ticks() {
	local rest
	rest=$(<"/proc/$1/stat")
	rest=${rest##*) }
	awk '{ print $12 + $13 }' <<<"$rest"
}

now_s() { date +%s.%N; }

# wait_summary FILE PID LOG: wait (10 s at most) for a sink's first summary file, which it
# writes just after its address file: on a loaded machine the first read could come first.
wait_summary() {
	wait_file "$1" "$2" "$3" "the sink" "the sink wrote no summary file ($1)"
}

# write_config FILE HTTP_PORT METRICS_PORT EXPORTER SINK_PORT [PPROF_PORT] [CA_FILE]: the
# collector's own metrics at its default level, normal, as operators run it (the dropped
# counts are the point), served for scraping on METRICS_PORT (no one scrapes it here). With
# CA_FILE, the sink serves HTTPS with that certificate and the exporter trusts it.
write_config() {
	local file=$1 http=$2 metrics=$3 exporter=$4 sink=$5 pprof=${6:-} ca=${7:-} signal=${8:-} ext="" extlist="" scheme=http tls="" profiles=""
	if [[ -n "$ca" ]]; then
		scheme=https
		tls=$'\n    tls:\n      ca_file: '"$ca"
	fi
	if [[ -n "$pprof" ]]; then
		ext=$'extensions:\n  pprof:\n    endpoint: 127.0.0.1:'"$pprof"
		extlist="  extensions: [pprof]"
	fi
	local name="$exporter" exp
	case "$exporter" in
	sentry)
		exp="  sentry:
    dsn: $scheme://public@127.0.0.1:$sink/1$tls
$(printf '%s\n' "$SENTRY_EXTRA" | sed '/^$/d; s/^/    /')"
		;;
	sentry-spans)
		name=sentry
		exp="  sentry:
    dsn: $scheme://public@127.0.0.1:$sink/1$tls
    traces_as: spans
$(printf '%s\n' "$SENTRY_EXTRA" | sed '/^$/d; s/^/    /')"
		;;
	sentry-noerrors)
		name=sentry
		exp="  sentry:
    dsn: $scheme://public@127.0.0.1:$sink/1$tls
    error_events:
      from_logs: false
$(printf '%s\n' "$SENTRY_EXTRA" | sed '/^$/d; s/^/    /')"
		;;
	otlphttp)
		name=otlp_http
		exp="  otlp_http:
    endpoint: $scheme://127.0.0.1:$sink$tls"
		;;
	otlphttp-pertrace | otlphttp-per100) # a request per trace (COMPARE_SPANS spans), or per 100 log records
		name=otlp_http
		local batch=$SPANS
		[[ "$exporter" != otlphttp-per100 ]] || batch=100
		exp="  otlp_http:
    endpoint: $scheme://127.0.0.1:$sink$tls
    compression: $PERTRACE_COMPRESSION
    sending_queue:
      batch:
        sizer: items
        min_size: $batch
        max_size: $batch
        flush_timeout: 200ms"
		;;
	esac
	[[ "$signal" != profiles ]] || profiles=$'    profiles:\n      receivers: [otlp]\n      exporters: ['"$name"']'
	cat >"$file" <<EOF
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$http
exporters:
$exp
$ext
service:
$extlist
  telemetry:
    logs:
      level: warn
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: $metrics
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [$name]
    logs:
      receivers: [otlp]
      exporters: [$name]
    metrics:
      receivers: [otlp]
      exporters: [$name]
$profiles
EOF
}

declare -A VAL # VAL[mode.round.cpu|bytes|rate]

# run MODE ROUND [PROFILE_FILE [PERF_FILE]]: one measurement.
run() {
	local mode=$1 round=$2 prof=${3:-} perfdata=${4:-} dir="$WORKDIR/$1.$2" ca="" tlsflag=()
	if [[ "$TLS" == 1 ]]; then
		ca="$dir/sink.crt"
		tlsflag=(--tls-cert-file "$ca")
	fi
	mkdir -p "$dir"
	local exporter signal otelcol=$OTELCOL
	if [[ "$mode" == *@alt ]]; then
		[[ -x "$ALT" ]] || die "mode $mode needs COMPARE_ALT, an executable collector"
		otelcol=$ALT
		mode=${mode%@alt}
	fi
	case "$mode" in
	sentry | sentry-spans | otlphttp | otlphttp-pertrace) exporter=$mode signal=traces ;;
	sentry-logs) exporter=sentry signal=logs ;;
	sentry-logs-noerrors) exporter=sentry-noerrors signal=logs ;;
	otlphttp-logs) exporter=otlphttp signal=logs ;;
	otlphttp-logs-per100) exporter=otlphttp-per100 signal=logs ;;
	sentry-metrics) exporter=sentry signal=metrics ;;
	otlphttp-metrics) exporter=otlphttp signal=metrics ;;
	sentry-profiles) exporter=sentry signal=profiles ;;
	otlphttp-profiles) exporter=otlphttp signal=profiles ;;
	*) die "unknown mode $mode" ;;
	esac
	if [[ "$exporter" == otlphttp* ]]; then
		start sink "$dir/sink.log" "$OSINK" --listen 127.0.0.1:0 --addr-file "$dir/sink.addr" --summary-file "$dir/sink.json" "${tlsflag[@]}"
	else
		start sink "$dir/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$dir/sink.addr" \
			--quiet --stats-every 0 --summary-file "$dir/sink.json" "${tlsflag[@]}"
	fi
	wait_addr_file "$dir/sink.addr" "$PID_sink" "$dir/sink.log"
	wait_summary "$dir/sink.json" "$PID_sink" "$dir/sink.log"
	local sink_addr http metrics pprof=""
	sink_addr=$(<"$dir/sink.addr")
	if [[ -n "$prof" ]]; then
		read -r http metrics pprof <<<"$(free_ports 3)"
	else
		read -r http metrics <<<"$(free_ports 2)"
	fi
	write_config "$dir/collector.yaml" "$http" "$metrics" "$exporter" "${sink_addr##*:}" "$pprof" "$ca" "$signal"
	local gate=()
	[[ "$signal" != profiles ]] || gate=(--feature-gates=service.profilesSupport)
	start collector "$dir/collector.log" "$otelcol" --config "$dir/collector.yaml" "${gate[@]}"
	wait_port "$http" "$PID_collector" "the collector (see $dir/collector.log)" 60

	local dur=$((WARMUP + WINDOW + 3)) rate=$RATE
	[[ "$signal" != metrics ]] || rate=$METRICS_RATE
	[[ "$signal" != profiles ]] || rate=$PROFILES_RATE
	start gen "$dir/gen.log" "$GEN" --endpoint "127.0.0.1:$http" --duration "${dur}s" --rate "$rate" \
		--signals "$signal" --spans-per-trace "$SPANS" --logs-per-trace 2 --exception-ratio 0.05 \
		--workers 4 --batch 200 --metric-streams 30 --quiet --summary-file "$dir/gen.json"
	local gen_pid=$PID_gen
	nap "$WARMUP"
	local c0 w0 c1 w1 i0 b0 u0 i1 b1 u1 key=spans prof_pid=""
	[[ "$signal" == logs ]] && key=logs
	[[ "$signal" != metrics ]] || key=$([[ "$exporter" == sentry ]] && echo trace_metrics || echo metric_points)
	[[ "$signal" != profiles ]] || key=profile_samples
	if [[ -n "$prof" ]]; then
		curl -s -o "$prof" "http://127.0.0.1:$pprof/debug/pprof/profile?seconds=$WINDOW" &
		prof_pid=$!
	fi
	local stat_pid=""
	if [[ -n "$perfdata" ]]; then
		perf record -q -e cpu-clock -F 1000 -g -p "$PID_collector" -o "$perfdata" -- sleep "$WINDOW" >/dev/null 2>&1 &
		prof_pid=$!
		# context switches and the syscalls of a round trip, counted over the same window
		perf stat -x, -o "${perfdata%.perf.data}.stat" -e "$PERF_EVENTS" -p "$PID_collector" -- sleep "$WINDOW" >/dev/null 2>&1 &
		stat_pid=$!
	fi
	c0=$(cpu_ticks "$PID_collector")
	w0=$(now_s)
	read -r i0 b0 u0 <<<"$("$SINK" --query "$dir/sink.json" "$key" wire_bytes uptime_seconds)"
	nap "$WINDOW"
	c1=$(cpu_ticks "$PID_collector")
	w1=$(now_s)
	read -r i1 b1 u1 <<<"$("$SINK" --query "$dir/sink.json" "$key" wire_bytes uptime_seconds)"
	if [[ -n "$perfdata" ]]; then
		wait "$prof_pid" || log "[$mode] perf record failed"
		wait "$stat_pid" || log "[$mode] perf stat failed"
	elif [[ -n "$prof_pid" ]]; then
		wait "$prof_pid" || log "[$mode] profile download failed"
		# allocations since start (sample_index=alloc_space): what drives the GC
		curl -s -o "${prof%.pb.gz}.allocs.pb.gz" "http://127.0.0.1:$pprof/debug/pprof/allocs" || log "[$mode] allocs profile download failed"
	fi
	wait_pid "$gen_pid" 30 || true
	stop_pid "$gen_pid" 5
	stop_pid "$PID_collector" 10
	stop_pid "$PID_sink" 10
	if [[ "$key" == trace_metrics ]]; then # items back to data points, by otlpgen's own ratio
		read -r i0 i1 <<<"$(awk -v a="$i0" -v b="$i1" -v p="$("$SINK" --query "$dir/gen.json" metric_points)" \
			-v t="$("$SINK" --query "$dir/gen.json" trace_metric_items)" 'BEGIN { printf "%.0f %.0f\n", a * p / t, b * p / t }')"
	fi

	local res
	res=$(awk -v c0="$c0" -v c1="$c1" -v w0="$w0" -v w1="$w1" -v hz="$TICKS" \
		-v i0="$i0" -v i1="$i1" -v b0="$b0" -v b1="$b1" -v u0="$u0" -v u1="$u1" 'BEGIN {
		cpu_rate = (c1 - c0) / hz / (w1 - w0)        # cores busy
		item_rate = (u1 > u0) ? (i1 - i0) / (u1 - u0) : 0
		if (item_rate <= 0 || i1 == i0) { print "0 0 0 0"; exit }
		printf "%.3f %.1f %.0f %.3f\n", cpu_rate / item_rate * 1e6, (b1 - b0) / (i1 - i0), item_rate, cpu_rate
	}')
	local cpu bytes rate cores
	read -r cpu bytes rate cores <<<"$res"
	VAL[$1.$round.cpu]=$cpu
	VAL[$1.$round.bytes]=$bytes
	VAL[$1.$round.rate]=$rate
	local invalid
	invalid=$("$SINK" --query "$dir/sink.json" invalid_envelopes)
	[[ "$invalid" == 0 ]] || die "[$mode] the sink rejected $invalid requests (see $dir)"
	log "[$1 round $round] ${cpu} µs CPU/item, ${bytes} B/item, ${rate} items/s at the sink, ${cores} cores; gen: $(tail -n 1 "$dir/gen.log" | cut -c1-160)"
}

read -r -a mode_list <<<"$MODES"
for ((r = 1; r <= ROUNDS; r++)); do
	order=("${mode_list[@]}")
	if ((r % 2 == 0)); then # alternate the order, so no mode always runs first
		order=()
		for ((k = ${#mode_list[@]} - 1; k >= 0; k--)); do order+=("${mode_list[k]}"); done
	fi
	for m in "${order[@]}"; do
		run "$m" "$r"
	done
done
if [[ -n "$PROFILE_DIR" ]]; then
	for m in "${mode_list[@]}"; do
		run "$m" profile "$PROFILE_DIR/$m.pb.gz"
	done
fi
if [[ -n "$PERF_DIR" ]]; then
	for m in "${mode_list[@]}"; do
		run "$m" perf "" "$PERF_DIR/$m.perf.data"
		# µs of CPU per trace (SPANS spans) or per 100 log records, from this run's own figure
		unit=trace per=$(awk -v c="${VAL[$m.perf.cpu]}" -v s="$SPANS" 'BEGIN { print c * s }')
		if [[ "$m" == *logs* ]]; then
			unit="100 logs" per=$(awk -v c="${VAL[$m.perf.cpu]}" 'BEGIN { print c * 100 }')
		fi
		perf script -i "$PERF_DIR/$m.perf.data" -F comm,tid,time,ip,sym 2>/dev/null |
			awk -f "$ROOT/scripts/perfstages.awk" -v per="$per" -v unit="$unit" >"$PERF_DIR/$m.stages" ||
			log "[$m] perf script failed"
		# events per unit: counts over the window / (items/s x window) x items per unit
		awk -F, -v rate="${VAL[$m.perf.rate]}" -v w="$WINDOW" -v per="$([[ "$m" == *logs* ]] && echo 100 || echo "$SPANS")" -v unit="$unit" '
			$3 != "" && $1 ~ /^[0-9]+$/ { printf "%-50s %10.2f per %s\n", $3, $1 / (rate * w) * per, unit }' \
			"$PERF_DIR/$m.stat" >>"$PERF_DIR/$m.stages" || true
		log "[$m] CPU by stage ($PERF_DIR/$m.stages):"
		cat "$PERF_DIR/$m.stages" >&2
	done
fi

# throughput: envelopes/s the sentry exporter (defaults) delivers to a sink answering after
# 50 ms, with small traces offered well above that (as make load does; no otlphttp peer: its
# requests carry 200 spans each, so its request rate says nothing about ours).
THROUGHPUT=""
throughput() {
	local dir="$WORKDIR/throughput"
	mkdir -p "$dir"
	start sink "$dir/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$dir/sink.addr" \
		--delay 50ms --quiet --stats-every 0 --summary-file "$dir/sink.json"
	wait_addr_file "$dir/sink.addr" "$PID_sink" "$dir/sink.log"
	local sink_addr http metrics
	sink_addr=$(<"$dir/sink.addr")
	read -r http metrics <<<"$(free_ports 2)"
	write_config "$dir/collector.yaml" "$http" "$metrics" sentry "${sink_addr##*:}"
	start collector "$dir/collector.log" "$OTELCOL" --config "$dir/collector.yaml"
	wait_port "$http" "$PID_collector" "the collector (see $dir/collector.log)" 60
	start gen "$dir/gen.log" "$GEN" --endpoint "127.0.0.1:$http" --duration "$((WARMUP + WINDOW + 3))s" --rate 20000 \
		--signals traces --logs-per-trace 0 --exception-ratio 0 --workers 4 --batch 500 --quiet
	local gen_pid=$PID_gen e0 u0 e1 u1
	nap "$WARMUP"
	read -r e0 u0 <<<"$("$SINK" --query "$dir/sink.json" envelopes uptime_seconds)"
	nap "$WINDOW"
	read -r e1 u1 <<<"$("$SINK" --query "$dir/sink.json" envelopes uptime_seconds)"
	wait_pid "$gen_pid" 30 || true
	stop_pid "$gen_pid" 5
	stop_pid "$PID_collector" 5 # a full queue would take long to drain
	stop_pid "$PID_sink" 10
	THROUGHPUT=$(awk -v a="$e0" -v b="$e1" -v t="$u0" -v u="$u1" 'BEGIN { printf "%.0f", (u > t ? (b - a) / (u - t) : 0) }')
	log "[throughput] $THROUGHPUT envelopes/s at 50 ms round trip (defaults)"
}
if [[ "${COMPARE_THROUGHPUT:-1}" == 1 ]]; then
	throughput
fi

# median MODE FIELD: the median over the rounds
median() {
	local mode=$1 f=$2 r vals=()
	for ((r = 1; r <= ROUNDS; r++)); do
		[[ -n "${VAL[$mode.$r.$f]-}" ]] && vals+=("${VAL[$mode.$r.$f]}")
	done
	((${#vals[@]})) || { echo 0; return; }
	printf '%s\n' "${vals[@]}" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "n/a" }'; }
has() { [[ " $MODES " == *" $1 "* ]]; }

echo
echo "make compare: medians of $ROUNDS alternating rounds, ${RATE} items/s offered (metrics: $METRICS_RATE data points/s, profiles: $PROFILES_RATE samples/s), ${WINDOW}s window after ${WARMUP}s warm-up, traces of $SPANS spans$([[ "$TLS" != 1 ]] || echo ", over TLS")"
[[ -z "$SENTRY_EXTRA" ]] || echo "sentry exporter extra settings: $(tr '\n' ' ' <<<"$SENTRY_EXTRA")"
printf '%-40s %12s %12s %8s\n' "per item" "otlphttp" "sentry" "ratio"
# CPU_PAIRS: the CPU comparisons, each LABEL|SENTRY_MODE|PEER_MODE: a row of medians below, a line
# of per-round ratios after them.
CPU_PAIRS=(
	"CPU per span|sentry|otlphttp"
	"CPU per span, traces_as: spans|sentry-spans|otlphttp"
	"CPU per log record|sentry-logs|otlphttp-logs"
	"CPU per span, otlphttp at a request per trace|sentry|otlphttp-pertrace"
	"CPU per span, spans mode, same peer|sentry-spans|otlphttp-pertrace"
	"CPU per log record, no error events|sentry-logs-noerrors|otlphttp-logs"
	"CPU per log record, no error events, otlphttp at 100 a request|sentry-logs-noerrors|otlphttp-logs-per100"
	"otlphttp: a request per trace / batched|otlphttp-pertrace|otlphttp"
	"CPU per metric data point|sentry-metrics|otlphttp-metrics"
	"CPU per profile sample|sentry-profiles|otlphttp-profiles"
)
row() { # LABEL SENTRY_MODE PEER_MODE FIELD UNIT
	has "$2" && has "$3" || return 0
	local s p
	s=$(median "$2" "$4")
	p=$(median "$3" "$4")
	printf '%-40s %12s %12s %8s\n' "$1" "$p$5" "$s$5" "$(ratio "$s" "$p")"
}
for pair in "${CPU_PAIRS[@]}"; do
	IFS="|" read -r label smode pmode <<<"$pair"
	row "$label" "$smode" "$pmode" cpu " µs"
done
row "CPU per span, COMPARE_ALT build" sentry@alt otlphttp cpu " µs"
row "CPU per span, spans mode, COMPARE_ALT" sentry-spans@alt otlphttp cpu " µs"
row "CPU per log record, COMPARE_ALT build" sentry-logs@alt otlphttp-logs cpu " µs"
row "bytes on the wire per span" sentry otlphttp bytes " B"
row "bytes on the wire per span, spans mode" sentry-spans otlphttp bytes " B"
row "bytes on the wire per log record" sentry-logs otlphttp-logs bytes " B"
row "bytes on the wire per metric data point" sentry-metrics otlphttp-metrics bytes " B"
row "bytes on the wire per profile sample" sentry-profiles otlphttp-profiles bytes " B"
# per_round LABEL SENTRY_MODE PEER_MODE: the CPU ratio of each round (both modes measured in it),
# a round whose Sentry mode delivered under 90 % of the offered rate marked "*" (its CPU also paid
# for input not yet sent), and the median of the rounds not marked: on a loaded machine the
# medians above mix both.
per_round() {
	has "$2" && has "$3" || return 0
	local r line="" kept=() offered=$RATE
	[[ "$2" != *metrics* ]] || offered=$METRICS_RATE
	[[ "$2" != *profiles* ]] || offered=$PROFILES_RATE
	for ((r = 1; r <= ROUNDS; r++)); do
		[[ -n "${VAL[$2.$r.cpu]-}" && -n "${VAL[$3.$r.cpu]-}" ]] || continue
		local q lag
		q=$(ratio "${VAL[$2.$r.cpu]}" "${VAL[$3.$r.cpu]}")
		lag=$(awk -v a="${VAL[$2.$r.rate]}" -v o="$offered" 'BEGIN { print (a < 0.9 * o) ? "*" : "" }')
		line+=" $q$lag"
		[[ -n "$lag" || "$q" == n/a ]] || kept+=("${q%x}")
	done
	local med="none kept"
	if ((${#kept[@]})); then
		med=$(printf '%s\n' "${kept[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.2fx", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	fi
	printf '%-40s %s   (median of %d kept: %s)\n' "$1" "$line" "${#kept[@]}" "$med"
	MED[$2/$3]=${med%x}
}
declare -A MED # MED[sentry-mode/peer-mode]: the median of the kept rounds' CPU ratios
echo
echo "CPU ratio per round (* = the Sentry mode delivered under 90 % of the offered rate)"
for pair in "${CPU_PAIRS[@]}"; do
	IFS="|" read -r label smode pmode <<<"$pair"
	per_round "$label" "$smode" "$pmode"
done
echo
printf '%-40s' "items/s at the sink (median)"
for m in "${mode_list[@]}"; do printf ' %s=%s' "$m" "$(median "$m" rate)"; done
echo
for m in "${mode_list[@]}"; do
	((ROUNDS > 0)) || break
	offered=$RATE
	[[ "$m" != *metrics* ]] || offered=$METRICS_RATE
	[[ "$m" != *profiles* ]] || offered=$PROFILES_RATE
	if awk -v a="$(median "$m" rate)" -v r="$offered" 'BEGIN { exit !(a < 0.9 * r) }'; then
		echo "WARNING: $m delivered under 90 % of the offered rate: its figures include refused input (lower COMPARE_RATE or COMPARE_METRICS_RATE)"
	fi
done
[[ -z "$THROUGHPUT" ]] || echo "throughput, sentry exporter at defaults, sink answering after 50 ms: $THROUGHPUT envelopes/s (make load has the single-worker peer)"
[[ -z "$PROFILE_DIR" ]] || echo "CPU profiles: $PROFILE_DIR/<mode>.pb.gz (go tool pprof -top bin/otelcol-compare FILE)"

# COMPARE_CHECK: each "SENTRY_MODE/PEER_MODE<=MAX" fails the run when the median of the kept
# rounds' CPU ratios is above MAX, or was not measured (make compare-protocol).
failed=0
for c in ${COMPARE_CHECK:-}; do
	pair=${c%<=*} max=${c#*<=}
	got=${MED[$pair]-}
	if [[ -z "$got" || "$got" == "none kept" ]]; then
		echo "CHECK FAILED: $pair was not measured in a kept round"
		failed=1
	elif awk -v g="$got" -v m="$max" 'BEGIN { exit !(g > m) }'; then
		echo "CHECK FAILED: CPU ratio $pair is ${got}x, above ${max}x"
		failed=1
	else
		echo "check: CPU ratio $pair ${got}x <= ${max}x"
	fi
done
exit "$failed"
