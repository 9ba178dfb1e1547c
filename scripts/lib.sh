# shellcheck shell=bash
# Helpers shared by demo.sh, load.sh and soak.sh: process bookkeeping with a cleanup trap,
# free loopback ports, readiness waits, Prometheus scraping over bash's /dev/tcp (no curl
# needed) and the collector config. Source it from a script running `set -euo pipefail`.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$ROOT/bin"
OTELCOL="$BIN/otelcol-sentry"
SINK="$BIN/sentrysink"
GEN="$BIN/otlpgen"

PIDS=()
# set by start: the pid of the last process started under each name
# shellcheck disable=SC2034 # used by the scripts that source this file
PID_sink="" PID_collector="" PID_gen=""
WORKDIR=""

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

need_binaries() {
	local b
	for b in "$OTELCOL" "$SINK" "$GEN"; do
		[[ -x "$b" ]] || die "$b is missing; run 'make otelcol sink' first"
	done
}

# make_workdir: a temp directory removed by cleanup unless KEEP_WORKDIR=1.
make_workdir() {
	WORKDIR=$(mktemp -d "${TMPDIR:-/tmp}/sentryexporter-${1:-run}.XXXXXX")
}

# start NAME LOGFILE CMD...: run CMD in the background, remember its pid in PIDS and in
# the variable PID_<NAME>.
start() {
	local name=$1 logfile=$2
	shift 2
	"$@" >"$logfile" 2>&1 &
	local pid=$!
	PIDS+=("$pid")
	printf -v "PID_$name" '%s' "$pid"
}

# stop_pid PID [TIMEOUT_S]: SIGTERM, wait up to TIMEOUT_S (default 15) seconds, then SIGKILL.
# The pid is then forgotten, so that cleanup never signals a recycled pid.
stop_pid() {
	local pid=$1 timeout=${2:-15} i
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < timeout * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "pid $pid did not stop in ${timeout}s, killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	wait "$pid" 2>/dev/null || true
	forget_pid "$pid"
}

# forget_pid PID: drop PID from PIDS.
forget_pid() {
	local p keep=()
	for p in "${PIDS[@]}"; do
		[[ "$p" == "$1" ]] || keep+=("$p")
	done
	PIDS=("${keep[@]}")
}

# cleanup: stop every process we started (newest first) and remove the work directory.
cleanup() {
	local rc=$? i
	trap - EXIT INT TERM
	local pids=("${PIDS[@]}")
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		stop_pid "${pids[i]}" 10
	done
	if [[ -n "$WORKDIR" && -d "$WORKDIR" ]]; then
		if [[ "${KEEP_WORKDIR:-0}" == 1 || $rc -ne 0 ]]; then
			log "logs kept in $WORKDIR"
		else
			rm -rf "$WORKDIR"
		fi
	fi
	exit "$rc"
}

install_trap() {
	trap cleanup EXIT
	trap 'log "interrupted"; exit 130' INT
	trap 'log "terminated"; exit 143' TERM
}

# free_ports N: print N distinct free loopback ports, space separated.
# wait_file FILE PID LOG NAME FAILURE: wait (10 s at most) for process PID, called NAME,
# to write FILE; dies with its LOG if it exits first, with FAILURE if the time runs out.
wait_file() {
	local file=$1 pid=$2 logfile=$3 name=$4 failure=$5 i
	for ((i = 0; i < 100; i++)); do
		[[ -s "$file" ]] && return 0
		kill -0 "$pid" 2>/dev/null || die "$name exited during startup: $(cat "$logfile")"
		sleep 0.1
	done
	die "$failure"
}

# wait_addr_file FILE PID LOG: wait (10 s at most) for a sink to write its address.
wait_addr_file() {
	wait_file "$1" "$2" "$3" sentrysink "sentrysink did not start"
}

free_ports() {
	"$SINK" --print-free-port "$1" | tr '\n' ' '
}

# port_open PORT: true if something accepts connections on 127.0.0.1:PORT.
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# wait_port PORT PID WHAT [TIMEOUT_S]: wait until PORT accepts connections, failing early
# if PID exits.
wait_port() {
	local port=$1 pid=$2 what=$3 timeout=${4:-30} i
	for ((i = 0; i < timeout * 10; i++)); do
		port_open "$port" && return 0
		kill -0 "$pid" 2>/dev/null || die "$what exited during startup"
		sleep 0.1
	done
	die "$what did not listen on 127.0.0.1:$port within ${timeout}s"
}

# http_get PORT PATH: print the body of GET http://127.0.0.1:PORT/PATH (HTTP/1.0, bash only).
http_get() {
	local port=$1 path=$2
	{
		exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
		printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\nAccept: text/plain\r\n\r\n' "$path" "$port" >&3
		timeout 10 cat <&3 | tr -d '\r' | sed '1,/^$/d'
		exec 3<&-
	} 2>/dev/null
}

# scrape PORT FILE: save the collector's Prometheus metrics to FILE.
scrape() {
	http_get "$1" /metrics >"$2" || : >"$2"
}

# metric_sum FILE NAME [LABEL_FILTER...]: sum of all series of NAME or NAME_total (the
# collector's Prometheus exporter adds the suffix or not depending on its version),
# optionally only the lines containing every LABEL_FILTER such as 'category="span"'; 0 if none.
metric_sum() {
	local file=$1 name=$2
	shift 2
	local filters=""
	(($# == 0)) || filters=$(printf '%s\037' "$@")
	awk -v n="$name" -v fl="$filters" '
		BEGIN { nf = split(fl, f, "\037") }
		$1 == n || $1 == n "_total" || index($1, n "{") == 1 || index($1, n "_total{") == 1 {
			ok = 1
			for (i = 1; i <= nf; i++) if (f[i] != "" && index($0, f[i]) == 0) ok = 0
			if (ok) s += $NF
		}
		END { printf "%.0f\n", s + 0 }' "$file"
}

# metric_lines FILE PREFIX: the series whose name starts with PREFIX.
metric_lines() {
	grep -E "^$2" "$1" || true
}

# telemetry_yaml METRICS_PORT [console]: the collector's service::telemetry block (logs at
# COLLECTOR_LOG_LEVEL, metrics pulled on 127.0.0.1:METRICS_PORT); with "console", also a
# periodic console reader whose only export (the interval is an hour) is the final one at
# shutdown.
telemetry_yaml() {
	local metrics=$1
	cat <<EOF
  telemetry:
    logs:
      level: ${COLLECTOR_LOG_LEVEL:-info}
    metrics:
      level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: $metrics
EOF
	if [[ ${2:-} == console ]]; then
		cat <<EOF
        - periodic:
            interval: 3600000
            exporter:
              console: {}
EOF
	fi
}

# write_collector_config FILE OTLP_GRPC_PORT OTLP_HTTP_PORT METRICS_PORT SINK_PORT [EXTRA_EXPORTER_YAML [PROCESSORS]]
# SINK_PORT "" writes no `dsn` (routing gives the DSNs). EXTRA_EXPORTER_YAML is indented into the sentry exporter's block (4 spaces). PROCESSORS is
# the pipelines' processor list (default "batch"; "" for none, "memory_limiter, batch"…).
# With COLLECTOR_PROFILES=1 it adds a profiles pipeline (otlp -> sentry, no processor: the
# batch processor takes no profiles), which needs the collector started with
# $(profiles_gate) among its arguments.
write_collector_config() {
	local file=$1 grpc=$2 http=$3 metrics=$4 sink=$5 extra=${6:-} processors=${7-batch}
	cat >"$file" <<EOF
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$grpc
      http:
        endpoint: 127.0.0.1:$http

processors:
  batch:
    send_batch_size: 1024
    timeout: 1s
  memory_limiter:
    check_interval: 1s
    limit_mib: 1024
    spike_limit_mib: 256

exporters:
  sentry:
$([[ -z "$sink" ]] || echo "    dsn: http://public@127.0.0.1:$sink/1")
$(printf '%s\n' "$extra" | sed '/^$/d; s/^/    /')

service:
$(telemetry_yaml "$metrics")
  pipelines:
    traces:
      receivers: [otlp]
      processors: [$processors]
      exporters: [sentry]
    logs:
      receivers: [otlp]
      processors: [$processors]
      exporters: [sentry]
    metrics:
      receivers: [otlp]
      processors: [$processors]
      exporters: [sentry]
$([[ "${COLLECTOR_PROFILES:-}" != 1 ]] || printf '    profiles:\n      receivers: [otlp]\n      exporters: [sentry]')
EOF
}

# profiles_gate: the collector's argument that turns its profiles support on (the feature
# gate service.profilesSupport) when COLLECTOR_PROFILES=1; nothing otherwise.
profiles_gate() {
	[[ "${COLLECTOR_PROFILES:-}" != 1 ]] || echo --feature-gates=service.profilesSupport
}

# rss_kb PID: VmRSS of PID in kB (0 if gone).
rss_kb() {
	awk '/^VmRSS:/ { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# wait_drained METRICS_PORT SINK_SUMMARY TIMEOUT_S: wait until the exporter queue is empty
# and the sink's request count has been stable for 2 s, and at least 6 s have passed (the
# dedupe window); bounded by TIMEOUT_S.
wait_drained() {
	local port=$1 summary=$2 timeout=$3 i q prev=-1 cur stable=0 m="$WORKDIR/drain.prom"
	for ((i = 0; i < timeout * 2; i++)); do
		scrape "$port" "$m"
		q=$(metric_sum "$m" otelcol_exporter_queue_size)
		cur=$("$SINK" --query "$summary" requests 2>/dev/null || echo -1)
		if [[ "$q" == 0 && "$cur" == "$prev" ]]; then
			stable=$((stable + 1))
			# and not before the dedupe window (error_events.dedupe_window, 5 s, released by a
			# 1 s tick) is over: error events held in it are sent, or counted, only then.
			((stable >= 4 && i >= 12)) && return 0
		else
			stable=0
		fi
		prev=$cur
		sleep 0.5
	done
	# Informational: what is still moving is sent or counted at shutdown, which the checks see.
	if [[ "$q" != 0 ]]; then
		log "queue not drained after ${timeout}s (queue_size=$q)"
	else
		log "not settled after ${timeout}s: queue empty, the sink's request count still rising (retries)"
	fi
	return 0
}

# nap SECONDS: sleep in the background and wait for it, so that a signal to this script
# runs the cleanup trap at once instead of after the sleep.
nap() {
	sleep "$1" &
	local pid=$!
	PIDS+=("$pid")
	wait "$pid" || true
	forget_pid "$pid"
}

# wait_pid PID TIMEOUT_S: wait (interruptibly) up to TIMEOUT_S seconds for PID to exit.
wait_pid() {
	local pid=$1 timeout=$2 i
	for ((i = 0; i < timeout * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}
