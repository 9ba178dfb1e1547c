#!/usr/bin/env bash
# make scaleout: the documented scale-out (docs/scale-out.md) with the real OpenTelemetry
# Go SDK's load. A front collector (bin/otelcol-front: otlp receiver, contrib
# loadbalancing exporter v0.161.0, static resolver) spreads the traffic of twelve services
# over two otelcol-sentry replicas, each sending to its own Sentry project (1 and 2) of
# the local sink. Traces are routed by `routing_key: service` and logs by
# `routing_key: attributes` with `routing_attributes: [service.name]`, which hash the same
# string ("service.name=<name>|") at v0.161.0, so a request's spans, its logs and its
# exception's two renderings meet in one replica (assembly, dedupe).
#
# Run 1, steady: checks, with loadtest/sdkcheck, that
#   - every request is one transaction with all its children (within 1 %);
#   - every span, log and error event is stored once; one error event per exception;
#   - each request's spans, logs and error event are in one project (one replica), and
#     each service's in one replica;
#   - each replica's counters hold (accepted = sent_items + dropped_items per category),
#     the replicas' accepted spans and logs sum to exactly what the front accepted, which
#     is what the SDK exported, and the front failed nothing;
#   - with profiles: sdkapp's services run in containers (container.id) and their
#     eBPF-shaped profiles go to replica 1 alone (the loadbalancing exporter has no
#     profiles pipeline); both replicas run with profiles::all_processes_profiled_by:
#     container.id, and each replica's transactions name the profiler_id their service's
#     chunks carry (within 1 %; sdkcheck prints the share per replica).
# Run 2, a replica stopped: the same traffic, and 70 % into it the busier replica
# gets SIGTERM (it drains, then exits; the front keeps routing its services to it and
# counts what it cannot deliver). Checks that nothing goes unaccounted: spans and logs
# stored once + counted by the replicas (dropped_items) + counted by the front
# (send_failed / enqueue_failed) = sent by the SDK, with nothing stored twice.
# Exits non-zero on any failed check. Everything listens on 127.0.0.1.
#
# Environment: SCALEOUT_DURATION (10s), SCALEOUT_RATE (requests/s, 100),
# SCALEOUT_FRONT_CONSUMERS (10), SCALEOUT_PROFILED_BY (the replicas'
# all_processes_profiled_by, container.id; k8s.pod.uid, which sdkapp's resources lack,
# shows a replica without it), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=sdklib.sh
source "$(dirname "${BASH_SOURCE[0]}")/sdklib.sh"

DURATION=${SCALEOUT_DURATION:-10s}
RATE=${SCALEOUT_RATE:-100}
SERVICES=12
# consumers of each front loadbalancing exporter's queue (exporterhelper's default 10); more
# than one can deliver an SDK's exports out of order (docs/scale-out.md)
FRONT_CONSUMERS=${SCALEOUT_FRONT_CONSUMERS:-10}
SCALEOUT_PROFILED_BY=${SCALEOUT_PROFILED_BY:-container.id}

for b in "$OTELCOL" "$OTELCOL_FRONT" "$SINK" "$SDKAPP" "$SDKCHECK"; do
	[[ -x "$b" ]] || die "$b is missing; run 'make scaleout'"
done
make_workdir scaleout
install_trap

# front_config FILE HTTP METRICS REPLICA_GRPC_ENDPOINT...: the front collector.
# The per-backend otlp exporters (protocol.otlp) have no queue and a short retry (a
# failing call holds one of the queue's consumers while it retries), so a
# backend's failure reaches the loadbalancing exporter's own exporterhelper, whose
# otelcol_exporter_send_failed_* count it: the per-backend exporters' own telemetry is a
# no-op at v0.161.0 (buildExporterSettings). That exporterhelper has a sending queue
# (off by default at v0.161.0: configoptional.Default), so the SDKs are answered at once
# and a failure is counted once, not once per SDK retry; it has no retry of its own
# (a retry would re-send to the healthy backend too) and no batching. Each SDK export
# holds one service, and the front has no batch processor, so each call goes to one
# backend and a failure counts exactly the items that backend did not take (a batch of
# several services would be counted failed whole when one backend fails).
front_config() {
	local file=$1 http=$2 metrics=$3
	shift 3
	local hosts
	hosts=$(printf '"%s",' "$@")
	cat >"$file" <<EOF
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$http
exporters:
  loadbalancing/traces:
    routing_key: service
    sending_queue: &queue
      enabled: true
      queue_size: 5000
      num_consumers: $FRONT_CONSUMERS
    protocol: &otlp
      otlp:
        tls:
          insecure: true
        timeout: 5s
        sending_queue:
          enabled: false
        retry_on_failure:
          enabled: true
          initial_interval: 100ms
          max_interval: 200ms
          max_elapsed_time: 500ms
    resolver: &resolver
      static:
        hostnames: [${hosts%,}]
  loadbalancing/logs:
    routing_key: attributes
    routing_attributes: [service.name]
    sending_queue: *queue
    protocol: *otlp
    resolver: *resolver
service:
$(telemetry_yaml "$metrics")
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [loadbalancing/traces]
    logs:
      receivers: [otlp]
      exporters: [loadbalancing/logs]
EOF
}

# scaleout_run NAME KILL PROFILES: one run with fresh processes; KILL=1 stops the busier
# replica 70 % into the traffic; PROFILES=1 sends profiles to replica 1. Returns non-zero if
# a check failed.
scaleout_run() {
	local name=$1 kill=$2 profiles=$3 d="$WORKDIR/$1" r
	mkdir -p "$d"
	log "=== $name"
	start sink "$d/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$d/sink.addr" --quiet --stats-every 0 \
		--summary-file "$d/sink.json" --record-file "$d/records.jsonl"
	wait_addr_file "$d/sink.addr" "$PID_sink" "$d/sink.log"
	local sink_pid=$PID_sink sink_addr
	sink_addr=$(<"$d/sink.addr")

	local -a rpid rgrpc rhttp rmetrics gate=() profiled_by=()
	((!profiles)) || gate=(--feature-gates=service.profilesSupport) profiled_by=("$SCALEOUT_PROFILED_BY")
	for r in 1 2; do
		local g h m
		read -r g h m <<<"$(free_ports 3)"
		sentry_replica_config "$d/replica$r.yaml" "$g" "$h" "$m" "http://public@$sink_addr/$r" transactions "${profiled_by[@]}"
		start_split replica "$d/replica$r" "$OTELCOL" --config "$d/replica$r.yaml" "${gate[@]}"
		rpid[r]=$PID_replica rgrpc[r]=$g rhttp[r]=$h rmetrics[r]=$m
	done
	for r in 1 2; do
		wait_port "${rgrpc[r]}" "${rpid[r]}" "replica $r (see $d/replica$r.log)" 60
		wait_port "${rmetrics[r]}" "${rpid[r]}" "replica $r's metrics endpoint" 30
	done
	local fh fm
	read -r fh fm <<<"$(free_ports 2)"
	front_config "$d/front.yaml" "$fh" "$fm" "127.0.0.1:${rgrpc[1]}" "127.0.0.1:${rgrpc[2]}"
	start front "$d/front.log" "$OTELCOL_FRONT" --config "$d/front.yaml"
	local front_pid=$PID_front
	wait_port "$fh" "$front_pid" "the front collector (see $d/front.log)" 60
	wait_port "$fm" "$front_pid" "the front collector's metrics endpoint" 30

	local -a app_profiles=()
	((!profiles)) || app_profiles=(--profiles-endpoint "127.0.0.1:${rhttp[1]}")
	log "sdkapp: $RATE requests/s for $DURATION from $SERVICES services through the front${app_profiles[*]:+, profiles to replica 1}"
	"$SDKAPP" "${app_profiles[@]}" --endpoint "127.0.0.1:$fh" --rate "$RATE" --duration "$DURATION" --services "$SERVICES" \
		--exception-every 20 --slow-every 50 --slow-tail 4s --async-every 10 --async-delay 7s --summary-file "$d/app.json" >"$d/app.log" 2>&1 &
	local app_pid=$!
	PIDS+=("$app_pid")
	local killed=""
	if ((kill)); then
		# after the SDKs' first exports (every 5 s at 8 requests/s per service)
		nap $((${DURATION%s} * 7 / 10))
		local a1 a2
		scrape "${rmetrics[1]}" "$d/mid1.prom"
		scrape "${rmetrics[2]}" "$d/mid2.prom"
		a1=$(metric_sum "$d/mid1.prom" otelcol_receiver_accepted_spans)
		a2=$(metric_sum "$d/mid2.prom" otelcol_receiver_accepted_spans)
		killed=1
		((a2 <= a1)) || killed=2
		log "SIGTERM to replica $killed (spans accepted so far: replica 1 $a1, replica 2 $a2)"
		stop_pid "${rpid[killed]}" 30
	fi
	wait_pid "$app_pid" 120 || die "sdkapp did not stop within 120 s"
	wait "$app_pid" || die "sdkapp failed (see $d/app.log)"
	forget_pid "$app_pid"
	cat "$d/app.log" >&2

	# the front's queue drained (its retries to a stopped replica given up), then the replicas'
	local i q
	for ((i = 0; i < 60; i++)); do
		scrape "$fm" "$d/front.prom"
		q=$(metric_sum "$d/front.prom" otelcol_exporter_queue_size)
		[[ "$q" == 0 ]] && break
		sleep 0.5
	done
	nap 4 # a request the front is still retrying is not in its queue
	scrape "$fm" "$d/front.prom"
	for r in 1 2; do
		[[ "$r" == "$killed" ]] || wait_drained "${rmetrics[r]}" "$d/sink.json" 60
	done
	for r in 1 2; do
		[[ "$r" == "$killed" ]] || scrape "${rmetrics[r]}" "$d/replica$r.prom"
	done
	stop_pid "$front_pid" 30
	for r in 1 2; do
		[[ "$r" == "$killed" ]] || stop_pid "${rpid[r]}" 30
	done
	stop_pid "$sink_pid" 10
	[[ "$("$SINK" --query "$d/sink.json" invalid_envelopes)" == 0 ]] ||
		die "the sink saw invalid envelopes: $("$SINK" --query "$d/sink.json" last_invalid)"

	echo
	echo "=== $name"
	local args=(--app "$d/app.json" --records "$d/records.jsonl" --mode transactions --front "$d/front.prom")
	for r in 1 2; do
		args+=(--collector "replica$r=$(final_metrics "$d/replica$r.out" "$d/replica$r.prom")")
	done
	if ((kill)); then
		args+=(--killed)
	else
		args+=(--together)
	fi
	((!profiles)) || args+=(--profiles)
	"$SDKCHECK" "${args[@]}"
}

failed=()
scaleout_run steady 0 1 || failed+=(steady)
scaleout_run "replica-stopped" 1 0 || failed+=(replica-stopped)
if ((${#failed[@]} > 0)); then
	log "FAIL: scale-out checks failed: ${failed[*]} (logs in $WORKDIR)"
	exit 1
fi
log "OK: scale-out through a loadbalancing front: one transaction per request, every item stored once or counted, also with a replica stopped mid-run; every replica's transactions name their process's profiler"
