# shellcheck shell=bash
# shellcheck disable=SC2034,SC2153,SC2154 # set here for the scripts (LOAD_*_MS, STOP_MS...), or by lib.sh (SINK, PID_*)
# Helpers of the fault checks of issue 19 (brownout.sh, partition.sh, heal.sh, flap.sh,
# chaos.sh; docs/faults.md), sourced after lib.sh: the collector with a final metric
# export at shutdown, the sink and otlpgen with per-second timelines, RSS series and
# their least-squares slope, per-category accounting, and the verdict lines.

# shellcheck source-path=SCRIPTDIR source=sdklib.sh
source "$(dirname "${BASH_SOURCE[0]}")/sdklib.sh" # start_split

# A healthy Sentry's latency: the sink answers after this long when it answers (bounds.sh's
# SINK_DELAY). A sink answering at once would hide what a slow answer costs the exporter.
FAULTS_SINK_DELAY=${FAULTS_SINK_DELAY:-50ms}
FAULTS_STOP_S=10 # SIGTERM to exit: pending.drain_timeout 5 s + final reports 2 s + margin (docs/memory.md)

# secs DURATION: whole seconds of 90, 90s, 3m or 1h.
secs() {
	case "$1" in
	*ms) echo 0 ;;
	*s) echo "${1%s}" ;;
	*m) echo $((${1%m} * 60)) ;;
	*h) echo $((${1%h} * 3600)) ;;
	*) echo "$1" ;;
	esac
}

now_ms() { date +%s%3N; }

# service_name I: the I-th service otlpgen --services N names (0-based): checkout,
# inventory, payments, checkout-2, inventory-2...
service_name() {
	local base=(checkout inventory payments) i=$1
	if ((i / 3 == 0)); then echo "${base[i % 3]}"; else echo "${base[i % 3]}-$((i / 3 + 1))"; fi
}

# routes_yaml N SINK_PORT: a routing block sending service I to project I+1 of the sink.
routes_yaml() {
	local n=$1 port=$2 i
	printf 'routing:\n  attribute: service.name\n  max_projects: %s\n  dsns:\n' "$n"
	for ((i = 0; i < n; i++)); do
		printf '    %s: http://public@127.0.0.1:%s/%s\n' "$(service_name "$i")" "$port" $((i + 1))
	done
}

# start_fault_sink DIR ARGS...: a sink on a free port, its summary in DIR/sink.json and its
# timeline in DIR/sink.tl; sets SINK_PORT and PID_sink. With --blackhole, only that.
start_fault_sink() {
	local dir=$1
	shift
	if [[ " $* " == *" --blackhole "* ]]; then
		start sink "$dir/sink.log" "$SINK" --blackhole --listen 127.0.0.1:0 --addr-file "$dir/sink.addr"
	else
		start sink "$dir/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$dir/sink.addr" --quiet --stats-every 0 \
			--summary-file "$dir/sink.json" --timeline-file "$dir/sink.tl" "$@"
	fi
	wait_addr_file "$dir/sink.addr" "$PID_sink" "$dir/sink.log"
	SINK_PORT=$(<"$dir/sink.addr")
	SINK_PORT=${SINK_PORT##*:}
}

# start_fault_collector DIR DSN_PORT EXTRA_EXPORTER_YAML: bin/otelcol-sentry as
# write_collector_config writes it (otlp receiver, batch processor, the exporter at its
# defaults plus EXTRA), with no log sampling (every final client report line is logged)
# and a console metric reader whose only export (the interval is an hour) is the final
# one at shutdown, after the exporter has sent or counted everything: stdout in
# DIR/collector.out, the log in DIR/collector.log. Sets PID_collector, HTTP_PORT,
# METRICS_PORT.
start_fault_collector() {
	local dir=$1 dsn_port=$2 extra=$3 grpc
	read -r grpc HTTP_PORT METRICS_PORT <<<"$(free_ports 3)"
	write_collector_config "$dir/collector.yaml" "$grpc" "$HTTP_PORT" "$METRICS_PORT" "$dsn_port" "$extra"
	awk -v m="$METRICS_PORT" '
		{ print }
		$0 ~ /^      level: / && !done_sampling { print "      sampling:\n        enabled: false"; done_sampling = 1 }
		$1 == "port:" && $2 == m && !done_console {
			print "        - periodic:\n            interval: 3600000\n            exporter:\n              console: {}"
			done_console = 1
		}' "$dir/collector.yaml" >"$dir/collector.yaml.tmp" && mv "$dir/collector.yaml.tmp" "$dir/collector.yaml"
	# shellcheck disable=SC2046 # profiles_gate is one word or none
	start_split collector "$dir/collector" "$OTELCOL" --config "$dir/collector.yaml" $(profiles_gate)
	wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $dir/collector.log)" 60
	wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30
}

# run_gen DIR ARGS...: otlpgen against the collector until it ends, its totals in
# DIR/gen.json and timeline in DIR/gen.tl; sets LOAD_START_MS and LOAD_END_MS.
run_gen() {
	local dir=$1
	shift
	LOAD_START_MS=$(now_ms)
	start gen "$dir/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP_PORT" --quiet \
		--summary-file "$dir/gen.json" --timeline-file "$dir/gen.tl" "$@"
	wait "$PID_gen" || log "otlpgen reported failures (see $dir/gen.log)"
	forget_pid "$PID_gen"
	LOAD_END_MS=$(now_ms)
}

# stop_collector DIR: SIGTERM, wait for the exit (30 s at most), and turn its final console
# export into DIR/final.prom (Prometheus text; the last /metrics scrape, DIR/last.prom, if
# it printed none). Sets STOP_MS and FINAL_FROM ("console export" or "last scrape").
stop_collector() {
	local dir=$1 t0
	scrape "$METRICS_PORT" "$dir/last.prom"
	t0=$(now_ms)
	stop_pid "$PID_collector" 30
	STOP_MS=$(($(now_ms) - t0))
	if "$SINK" --print-metrics "$dir/collector.out" >"$dir/final.prom" 2>/dev/null; then
		FINAL_FROM="console export"
	else
		log "no final console export in $dir/collector.out; using the last /metrics scrape"
		cp "$dir/last.prom" "$dir/final.prom"
		FINAL_FROM="last scrape"
	fi
}

# rss_series PID FILE: every second until PID exits, append "unix_ms rss_kb hwm_kb" to
# FILE; run in the background (its pid is in RSS_PID and PIDS).
rss_series() {
	local pid=$1 file=$2
	(
		s=""
		trap '[[ -z "$s" ]] || kill "$s" 2>/dev/null; exit 0' TERM
		while kill -0 "$pid" 2>/dev/null; do
			awk -v t="$(now_ms)" '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { if (r) print t, r, h }' "/proc/$pid/status" 2>/dev/null >>"$file" || true
			sleep 1 &
			s=$!
			wait "$s" || true
			s=""
		done
	) &
	RSS_PID=$!
	PIDS+=("$RSS_PID")
}

# stop_rss: wait for the sampler (it ends with the collector), else stop it.
stop_rss() {
	wait_pid "$RSS_PID" 3 || true
	stop_pid "$RSS_PID" 5
}

# rss_slope FILE FROM_MS TO_MS [hwm]: the least-squares slope of RSS (VmRSS; with hwm, the
# peak so far, VmHWM) over the samples in [FROM_MS, TO_MS], in MiB per minute ("n/a" under
# 10 samples).
rss_slope() {
	awk -v a="$2" -v b="$3" -v col="$([[ ${4:-} == hwm ]] && echo 3 || echo 2)" '
		$1 >= a && $1 <= b { x = ($1 - a) / 60000; y = $col / 1024; n++; sx += x; sy += y; sxx += x * x; sxy += x * y }
		END {
			d = n * sxx - sx * sx
			if (n < 10 || d <= 0) { print "n/a"; exit }
			printf "%.1f\n", (n * sxy - sx * sy) / d
		}' "$1"
}

# rss_at FILE MS [hwm]: RSS (with hwm, VmHWM) in MiB of the last sample at or before MS
# (the first one if none).
rss_at() {
	awk -v t="$2" -v c="$([[ ${3:-} == hwm ]] && echo 3 || echo 2)" 'NR == 1 { v = $c } $1 <= t { v = $c } END { printf "%d\n", v / 1024 }' "$1"
}

# rss_max FILE FROM_MS TO_MS: the most RSS (MiB) sampled in [FROM_MS, TO_MS].
rss_max() {
	awk -v a="$2" -v b="$3" '$1 >= a && $1 <= b && $2 > m { m = $2 } END { printf "%d\n", m / 1024 }' "$1"
}

# hwm_mib FILE: the collector's peak RSS (VmHWM) in MiB, from the last sample.
hwm_mib() {
	awk '{ h = $3 } END { printf "%d\n", h / 1024 }' "$1"
}

# tl_col FILE NAME: the 1-based column of NAME in a timeline's header line.
tl_col() {
	awk -v n="$2" 'NR == 1 { for (i = 2; i <= NF; i++) if ($i == n) { print i - 1; exit } }' "$1"
}

# tl_by FILE NAME MS: how much of column NAME the timeline counted before MS (Unix ms):
# the whole seconds before it, and of the second MS falls in the share already passed
# (items spread evenly over their second).
tl_by() {
	local c
	c=$(tl_col "$1" "$2")
	[[ -n "$c" ]] || die "no column $2 in $1"
	awk -v c="$c" -v t="$3" '
		/^#/ { next }
		{ s = $1 * 1000 }
		s + 1000 <= t { sum += $c; next }
		s < t { sum += $c * (t - s) / 1000 }
		END { printf "%.0f\n", sum }' "$1"
}

# tl_sum FILE NAME: the column's total.
tl_sum() {
	local c
	c=$(tl_col "$1" "$2")
	awk -v c="$c" '!/^#/ { s += $c } END { print s + 0 }' "$1"
}

# items_by_category PROM GEN_JSON SINK_JSON [PROJECT SERVICE]: for span, log_item, error,
# trace_metric and profile_chunk: "category in stored dropped sent_items" lines, where in is what otlpgen delivered (its
# exceptions are the error items: one per exception span event and one per exception log,
# the dedupe window then sends one and counts the other `deduplicated`; its metric points
# are the trace metric items they become, docs/mapping.md#metrics--trace-metrics; its profiles
# the profile chunks they become, docs/mapping.md#profiles), stored what the
# sink took, dropped the sum over reasons of otelcol_exporter_sentry_dropped_items and
# sent_items the exporter's count of what Sentry accepted. With PROJECT and SERVICE, only
# that project's and that service's.
items_by_category() {
	local prom=$1 gen=$2 sink=$3 project=${4:-} service=${5:-} c in stored dropped sent filter=() gk sk
	[[ -z "$project" ]] || filter=("project=\"$project\"")
	for c in span log_item error trace_metric profile_chunk; do
		case $c in
		span) gk=spans sk=spans ;;
		log_item) gk=logs sk=logs ;;
		error) gk=exceptions sk=errors ;;
		trace_metric) gk=trace_metric_items sk=trace_metrics ;;
		profile_chunk) gk=profile_chunks sk=profile_chunks ;;
		esac
		if [[ -n "$project" ]]; then
			in=$("$SINK" --query "$gen" "by_service.$service.$gk")
			stored=$( [[ -f "$sink" ]] && "$SINK" --query "$sink" "by_project.$project.$sk" || echo 0)
		else
			in=$("$SINK" --query "$gen" "$gk")
			stored=$( [[ -f "$sink" ]] && "$SINK" --query "$sink" "$sk" || echo 0)
		fi
		dropped=$(metric_sum "$prom" otelcol_exporter_sentry_dropped_items "category=\"$c\"" "${filter[@]}")
		sent=$(metric_sum "$prom" otelcol_exporter_sentry_sent_items "category=\"$c\"" "${filter[@]}")
		echo "$c $in $stored $dropped $sent"
	done
}

# dropped_by PROM [category|reason]: the dropped items (log_byte left out) summed by
# "category/reason" (or by reason alone), as " key=n" pairs sorted by key.
dropped_by() {
	metric_lines "$1" otelcol_exporter_sentry_dropped_items |
		awk -v by="${2:-category}" '{
			match($0, /reason="[a-z_]+"/); r = substr($0, RSTART + 8, RLENGTH - 9)
			match($0, /category="[a-z_]+"/); c = substr($0, RSTART + 10, RLENGTH - 11)
			if (c != "log_byte") s[by == "reason" ? r : c "/" r] += $NF
		}
		END { for (k in s) printf "%s=%d\n", k, s[k] }' | sort | tr '\n' ' '
}

# Verdicts: verdict OK WHAT DETAIL prints one line and counts the failures in FAILURES.
FAILURES=0
verdict() {
	if [[ "$1" == 1 ]]; then
		printf '  ok    %-64s %s\n' "$2" "${3:-}"
	else
		printf '  FAIL  %-64s %s\n' "$2" "${3:-}"
		FAILURES=$((FAILURES + 1))
	fi
}

# ge A B / le A B: 1 if A >= B (A <= B) as numbers, else 0.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 >= b + 0) ? 1 : 0 }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 <= b + 0) ? 1 : 0 }'; }
# pct PART WHOLE: PART / WHOLE in %, one decimal.
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f\n", 100 * a / b; else print "n/a" }'; }

# finish NAME SUMMARY: the last line: how long the target took, then exit 1 on failures.
finish() {
	log "$1 took ${SECONDS}s"
	if ((FAILURES > 0)); then
		log "FAIL: $FAILURES checks failed (logs in $WORKDIR)"
		exit 1
	fi
	log "OK: $2"
}

# account_table DIR: the table of each category's fate from DIR's final.prom, gen.json and
# sink.json (delivered, stored, dropped, unaccounted, sent_items), and the dropped items by
# category and reason; sets unacc (items neither stored nor counted, summed) and twice (the
# categories whose sent_items differ from what the sink stored). FINAL_FROM names where
# final.prom came from.
account_table() {
	local dir=$1 c in stored dropped sent u
	printf '%-9s %10s %10s %10s %12s %12s\n' category delivered stored dropped unaccounted sent_items
	unacc=0 twice=0
	while read -r c in stored dropped sent; do
		u=$((in - stored - dropped))
		unacc=$((unacc + (u < 0 ? -u : u)))
		((sent == stored)) || twice=$((twice + 1))
		printf '%-9s %10s %10s %10s %12s %12s\n' "$c" "$in" "$stored" "$dropped" "$u" "$sent"
	done < <(items_by_category "$dir/final.prom" "$dir/gen.json" "$dir/sink.json")
	echo "dropped by category/reason (from the $FINAL_FROM): $(dropped_by "$dir/final.prom")"
}
