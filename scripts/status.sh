#!/usr/bin/env bash
# make status: the exporter's component status through the built collector's health
# endpoint (healthcheckv2, /status?verbose), while one project's Sentry answers 401, then
# 503, then 200 (issue 21). Two projects by routing.dsns: "checkout" to project 1 (a sink
# that stores everything) and "inventory" to project 2, whose DSN carries the key
# "revokedkey123" and whose sink is started three times on one port: every request answered
# 401 (a revoked key), then 503, then a healthy sink. otlpgen sends both services
# throughout. It fails unless:
#   - during the 401s the exporter's status is StatusRecoverableError naming
#     "project 2 refused its key (HTTP 401)" (one bad project among many degrades the
#     gateway; it does not fail it);
#   - during the 503s, once they have lasted over a minute (the documented
#     unreachableAfter), it names "project 2: no answer or only 5xx";
#   - with the healthy sink it is StatusOK again within STATUS_RECOVER_S (10 s);
#   - project 1 is never named, no status body ever holds the key, and the probe itself
#     (/status) answers 200 throughout (component errors show in the body, never in the
#     code: docs/deploy.md#health);
#   - the collector exits within 10 s of SIGTERM.
# About 2 minutes. Environment: STATUS_RATE (spans/s, 200), STATUS_RECOVER_S (10),
# KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RATE=${STATUS_RATE:-200}
RECOVER_S=${STATUS_RECOVER_S:-10}
UNREACHABLE_S=60 # unreachableAfter in status.go
KEY=revokedkey123

need_binaries
make_workdir status
install_trap
D=$WORKDIR

failures=0
check() { # check WHAT OK(1/0) DETAIL
	if [[ "$2" == 1 ]]; then
		printf '  ok    %-62s %s\n' "$1" "$3"
	else
		printf '  FAIL  %-62s %s\n' "$1" "$3"
		failures=$((failures + 1))
	fi
}

# start_sink NAME PORT ARGS...: a sink on 127.0.0.1:PORT (0: a free one, written to
# D/NAME.addr); sets PID_sink.
start_sink() {
	local name=$1 port=$2
	shift 2
	rm -f "$D/$name.addr"
	start sink "$D/$name.log" "$SINK" --listen "127.0.0.1:$port" --addr-file "$D/$name.addr" --quiet \
		--stats-every 0 --summary-file "$D/$name.json" "$@"
	wait_addr_file "$D/$name.addr" "$PID_sink" "$D/$name.log"
}

start_sink healthy 0
HEALTHY_PID=$PID_sink
HEALTHY_PORT=$(<"$D/healthy.addr")
HEALTHY_PORT=${HEALTHY_PORT##*:}
start_sink sick401 0 --fail-ratio 1 --fail-status 401
SICK_PID=$PID_sink
SICK_PORT=$(<"$D/sick401.addr")
SICK_PORT=${SICK_PORT##*:}

read -r grpc http metrics health <<<"$(free_ports 4)"
write_collector_config "$D/collector.yaml" "$grpc" "$http" "$metrics" "" "$(
	cat <<EOF
routing:
  attribute: service.name
  dsns:
    checkout: http://public@127.0.0.1:$HEALTHY_PORT/1
    inventory: http://$KEY@127.0.0.1:$SICK_PORT/2
EOF
)"
# the health extension, as testdata/gateway.yaml has it (without the events' attributes)
awk -v h="$health" '
	/^service:$/ {
		print "extensions:\n  healthcheckv2:\n    use_v2: true\n    component_health:\n      include_permanent_errors: false\n      include_recoverable_errors: false\n    http:\n      endpoint: 127.0.0.1:" h "\n      status:\n        enabled: true\n        path: /status\n"
		print; print "  extensions: [healthcheckv2]"; next
	}
	{ print }' "$D/collector.yaml" >"$D/collector.yaml.tmp" && mv "$D/collector.yaml.tmp" "$D/collector.yaml"
start collector "$D/collector.log" "$OTELCOL" --config "$D/collector.yaml"
wait_port "$http" "$PID_collector" "the collector (see $D/collector.log)" 60
wait_port "$health" "$PID_collector" "the health endpoint" 30

start gen "$D/gen.log" "$GEN" --endpoint "127.0.0.1:$http" --duration 600s --rate "$RATE" --services 2 \
	--logs-per-trace 1 --workers 1 --batch 20 --quiet

# exporter_status: the exporter's entry in /status?verbose ("status|error"), the body in
# D/status.json. It runs in a subshell ($(...)), so what it records for the final checks
# goes to files: the probe's code of each poll (D/codes), every body (D/bodies).
exporter_status() {
	local code entry st er
	code=$({ exec 3<>"/dev/tcp/127.0.0.1/$health" && printf 'GET /status HTTP/1.0\r\n\r\n' >&3 && timeout 5 head -n 1 <&3; } 2>/dev/null | awk '{ print $2 }')
	echo "${code:-none}" >>"$D/codes"
	http_get "$health" '/status?verbose' >"$D/status.json" || : >"$D/status.json"
	cat "$D/status.json" >>"$D/bodies"
	# up to the first "}" of the entry: its status and error come before its attributes
	entry=$(grep -o '"exporter:sentry":{[^}]*' "$D/status.json" | head -n 1 || true)
	st=$(grep -o '"status":"[A-Za-z]*"' <<<"$entry" | head -n 1 | cut -d'"' -f4 || true)
	er=$(grep -o '"error":"[^"]*"' <<<"$entry" | head -n 1 | cut -d'"' -f4 || true)
	echo "$st|$er"
}

# await PHASE WANT_STATUS WANT_ERROR_PART TIMEOUT_S: poll every second; prints the seconds it took.
await() {
	local phase=$1 want=$2 part=$3 timeout=$4 i got
	for ((i = 0; i <= timeout; i++)); do
		got=$(exporter_status)
		if [[ "${got%%|*}" == "$want" && "${got#*|}" == *"$part"* ]]; then
			check "$phase: $want${part:+ ($part)}" 1 "after ${i}s"
			return 0
		fi
		sleep 1
	done
	check "$phase: $want${part:+ ($part)}" 0 "got '${got:-none}' after ${timeout}s"
}

log "phase 1: project 2's Sentry answers 401"
await "401" StatusRecoverableError "project 2 refused its key (HTTP 401)" 30

log "phase 2: project 2's Sentry answers 503 (unreachable after ${UNREACHABLE_S}s)"
stop_pid "$SICK_PID" 10
start_sink sick503 "$SICK_PORT" --fail-ratio 1 --fail-status 503
SICK_PID=$PID_sink
t0=$(date +%s)
await "503" StatusRecoverableError "project 2: no answer or only 5xx" $((UNREACHABLE_S + 30))
took=$(($(date +%s) - t0))
check "503: not reported before it lasted ${UNREACHABLE_S}s" "$((took >= UNREACHABLE_S - 5 ? 1 : 0))" "${took}s"

log "phase 3: project 2's Sentry answers again"
stop_pid "$SICK_PID" 10
start_sink sick200 "$SICK_PORT"
await "recovered" StatusOK "" "$RECOVER_S"

stop_pid "$PID_gen" 10
t0=$(date +%s%3N)
stop_pid "$PID_collector" 30
stop_ms=$(($(date +%s%3N) - t0))
stop_pid "$HEALTHY_PID" 10

codes=$(sort "$D/codes" | uniq -c | tr -s ' \n' ' ')
check "the probe (/status) answered 200 throughout" "$([[ -s "$D/codes" ]] && ! grep -qv '^200$' "$D/codes" && echo 1 || echo 0)" "polls by code:$codes"
check "no status body held the DSN's key" "$(grep -q "$KEY" "$D/bodies" && echo 0 || echo 1)" ""
check "project 1 (healthy) was never named" "$(grep -q 'project 1[^0-9]' "$D/bodies" && echo 0 || echo 1)" ""
check "the collector stopped within 10 s of SIGTERM" "$((stop_ms <= 10000 ? 1 : 0))" "${stop_ms} ms"

if ((failures > 0)); then
	log "FAIL: $failures checks failed (logs in $D)"
	exit 1
fi
log "OK: the exporter's status followed project 2's answers: 401, 503, recovery"
