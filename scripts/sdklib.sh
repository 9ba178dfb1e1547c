# shellcheck shell=bash
# Helpers of the real-SDK checks (sdktraffic.sh, scaleout.sh; docs/sdk-traffic.md),
# sourced after lib.sh.

SDKAPP="$BIN/sdkapp"
SDKCHECK="$BIN/sdkcheck"
OTELCOL_FRONT="$BIN/otelcol-front"

# start_split NAME PREFIX CMD...: as lib.sh's start, with stdout in PREFIX.out (a
# collector's console metric export) and stderr in PREFIX.log (its log).
start_split() {
	local name=$1 prefix=$2
	shift 2
	"$@" >"$prefix.out" 2>"$prefix.log" &
	local pid=$!
	PIDS+=("$pid")
	printf -v "PID_$name" '%s' "$pid"
}

# sentry_replica_config FILE GRPC HTTP METRICS DSN TRACES_AS [PROFILED_BY]: an otelcol-sentry
# as a user runs it: otlp receiver, the batch processor at its defaults, the sentry exporter;
# with PROFILED_BY, a profiles pipeline too (start it with --feature-gates=service.profilesSupport)
# and profiles::all_processes_profiled_by: PROFILED_BY. Its
# counters are read twice: from /metrics, and from a `console` periodic reader whose only
# export (the interval is an hour) is the final one at shutdown, after the exporter has
# sent or counted everything, printed on stdout.
sentry_replica_config() {
	local file=$1 grpc=$2 http=$3 metrics=$4 dsn=$5 traces_as=$6 profiled_by=${7:-}
	cat >"$file" <<EOF
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$grpc
      http:
        endpoint: 127.0.0.1:$http
processors:
  batch: {}
exporters:
  sentry:
    dsn: $dsn
    traces_as: $traces_as
$([[ -z "$profiled_by" ]] || printf '    profiles:\n      all_processes_profiled_by: %s' "$profiled_by")
service:
$(telemetry_yaml "$metrics" console)
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [sentry]
    logs:
      receivers: [otlp]
      processors: [batch]
      exporters: [sentry]
$([[ -z "$profiled_by" ]] || printf '    profiles:\n      receivers: [otlp]\n      exporters: [sentry]')
EOF
}

# final_metrics STDOUT_FILE PROM_FILE: the file sdkcheck reads (Prometheus text): the final
# console export if the collector printed one (sentrysink --print-metrics renders it), else
# the last scrape.
final_metrics() {
	if "$SINK" --print-metrics "$1" >"$1.prom" 2>/dev/null; then echo "$1.prom"; else
		log "no final console export in $1; using the last /metrics scrape"
		echo "$2"
	fi
}

