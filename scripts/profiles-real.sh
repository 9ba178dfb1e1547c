#!/usr/bin/env bash
# make profiles-real: a real source of profiles through the built collector (the profiles
# pipeline, feature gate service.profilesSupport) into the sink, which checks each
# profile_chunk as Relay does. The source is loadtest/profilesreal: a real Go program under
# its own load, and a scraper of its /debug/pprof that sends, each round of
# PROFILES_REAL_SECONDS (5), two OTLP profiles of the process: its CPU profile as
# pprofreceiver converts one (aggregated counts, no timestamps), and the CPU samples the
# runtime wrote into its execution trace over the same seconds (a wall-clock time and a
# thread each). contrib's pprofreceiver and the OpenTelemetry eBPF profiler cannot be built
# here: the Go module proxy refuses them (docs/profiles.md).
#
# It fails unless, after PROFILES_REAL_ROUNDS (3) rounds:
#   - no envelope was invalid;
#   - each timestamped profile was stored as one chunk, and each aggregated one counted
#     dropped (invalid: a chunk is a timeline, docs/mapping.md#profiles); stored + dropped
#     profile_chunk = profiles sent;
#   - the chunks carry every CPU sample the traces held but those of threads with a single
#     sample in their profile, which Relay removes (and the exporter leaves out first);
#   - the samples came from more than one thread, and profile_duration was sent;
#   - read as Sentry's profile processing does, the program's handlers are application code,
#     and nothing outside its package main is.
# Everything listens on 127.0.0.1 only.
#
# Environment: PROFILES_REAL_ROUNDS (3), PROFILES_REAL_SECONDS (5), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

export COLLECTOR_PROFILES=1 # the profiles pipeline (scripts/lib.sh)
ROUNDS=${PROFILES_REAL_ROUNDS:-3}
SECS=${PROFILES_REAL_SECONDS:-5}
REAL="$BIN/profilesreal"

need_binaries
[[ -x "$REAL" ]] || die "$REAL is missing; run 'make profiles-real' (it builds it)"
make_workdir profiles-real
install_trap

start sink "$WORKDIR/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink.addr" --summary-file "$WORKDIR/sink.json"
wait_addr_file "$WORKDIR/sink.addr" "$PID_sink" "$WORKDIR/sink.log"
SINK_ADDR=$(<"$WORKDIR/sink.addr")

read -r GRPC_PORT HTTP_PORT METRICS_PORT <<<"$(free_ports 3)"
write_collector_config "$WORKDIR/collector.yaml" "$GRPC_PORT" "$HTTP_PORT" "$METRICS_PORT" "${SINK_ADDR##*:}"
# shellcheck disable=SC2046 # profiles_gate is one word
start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml" $(profiles_gate)
wait_port "$HTTP_PORT" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
wait_port "$METRICS_PORT" "$PID_collector" "the collector's metrics endpoint" 30

start app "$WORKDIR/app.log" "$REAL" app -addr-file "$WORKDIR/app.addr"
wait_file "$WORKDIR/app.addr" "$PID_app" "$WORKDIR/app.log" profilesreal "the profiled program did not start"
log "profiling the program at $(<"$WORKDIR/app.addr") (pid $PID_app): $ROUNDS rounds of ${SECS}s"
"$REAL" scrape -app "http://$(<"$WORKDIR/app.addr")" -otlp "http://127.0.0.1:$HTTP_PORT" -pid "$PID_app" \
	-rounds "$ROUNDS" -seconds "$SECS" -summary "$WORKDIR/sent.json"

wait_drained "$METRICS_PORT" "$WORKDIR/sink.json" 30
scrape "$METRICS_PORT" "$WORKDIR/metrics.prom"
stop_pid "$PID_app" 10
stop_pid "$PID_collector" 30
stop_pid "$PID_sink" 10

q() { "$SINK" --query "$1" "$2"; }
failures=0
check() { # check WHAT GOT WANT
	if [[ "$2" == "$3" ]]; then
		printf '  ok    %-62s %s\n' "$1" "$2"
	else
		printf '  FAIL  %-62s got %s, want %s\n' "$1" "$2" "$3"
		failures=$((failures + 1))
	fi
}
M="$WORKDIR/metrics.prom"
agg=$(q "$WORKDIR/sent.json" aggregated_profiles)
timed=$(q "$WORKDIR/sent.json" timestamped_profiles)
samples=$(q "$WORKDIR/sent.json" samples)
lonely=$(q "$WORKDIR/sent.json" lonely_samples)
stored=$(q "$WORKDIR/sink.json" profile_chunks)
dropped=$(metric_sum "$M" otelcol_exporter_sentry_dropped_items 'category="profile_chunk"')
invalid=$(metric_sum "$M" otelcol_exporter_sentry_dropped_items 'category="profile_chunk"' 'reason="invalid"')
echo
echo "=== a real Go program's profiles: $agg aggregated (pprof), $timed timestamped (execution trace), $samples CPU samples"
check "invalid envelopes" "$(q "$WORKDIR/sink.json" invalid_envelopes)" 0
check "timestamped profiles stored, one chunk each" "$stored" "$timed"
check "aggregated profiles counted invalid" "$invalid" "$agg"
check "profile_chunk: stored + dropped = profiles sent" "$((stored + dropped))" "$((agg + timed))"
check "samples stored = CPU samples - lonely ($lonely)" "$(q "$WORKDIR/sink.json" profile_samples)" "$((samples - lonely))"
check "samples from more than one thread" "$(($(q "$WORKDIR/sent.json" max_threads) > 1 ? 1 : 0))" 1
check "profile_duration sent" "$(($(metric_sum "$M" otelcol_exporter_sentry_sent_items 'category="profile_duration"') > 0 ? 1 : 0))" 1
# Sentry's profile processing (vroomrs set_in_app, cmd/sentrysink via internal/profiletest) reads
# the program's own functions, and only those, as application code
app=$(q "$WORKDIR/sink.json" profile_app_functions)
for h in handleOrders handleSearch handleDigest; do
	check "application function main.$h" "$(grep -c "\"go main $h\"" <<<"$app")" 1
done
check "application functions outside package main" "$(grep -o '"[^"]*":' <<<"$app" | grep -vc '^"go main ' || true)" 0
echo
if ((failures > 0)); then
	log "FAIL: $failures checks failed (logs in $WORKDIR)"
	exit 1
fi
log "OK: a real Go program's CPU samples stored in valid chunks, its aggregated profiles counted"
