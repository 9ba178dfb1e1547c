#!/usr/bin/env bash
# make image-smoke: the image of `make image` against the local Sentry sink. Builds the
# image, runs it (host network, the sink on 127.0.0.1) with its default configuration
# (deploy/kubernetes/collector.yaml; only the listen addresses moved to free loopback
# ports), and checks:
#   - it runs as the image's numeric user, and carries the CA certificates;
#   - the health endpoint answers 200 on /status, and /status?verbose shows the exporter;
#   - the receiver refuses a request without credentials (401; basicauth/senders, its htpasswd
#     mounted where the Deployment mounts its Secret);
#   - every span and log record otlpgen sends (with a sender's credentials) is stored by the
#     sink, none invalid;
#   - SIGTERM stops it within 20 s with exit status 0, and it logged no error.
# Where no container runtime works (none installed, or it cannot run containers here) it
# prints SKIP and exits 0; IMAGE_SMOKE_REQUIRED=1 (CI) makes that a failure.
#
# Environment: IMAGE, IMAGE_RUNTIME (scripts/image.sh), SMOKE_DURATION (5s),
# SMOKE_RATE (spans/s, 300), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=containerlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/containerlib.sh"

IMAGE=${IMAGE:-otelcol-sentry:$(image_version)}
export IMAGE
NAME="otelcol-sentry-smoke-$$"

need_binaries
if ! container_runtime; then
	if [[ ${IMAGE_SMOKE_REQUIRED:-0} == 1 ]]; then
		die "no container runtime works here, and IMAGE_SMOKE_REQUIRED=1: $RT_WHY"
	fi
	log "SKIP: no container runtime works here, so the image is not run: $RT_WHY"
	exit 0
fi

"$ROOT/scripts/image.sh"

make_workdir image-smoke
# cleanup (lib.sh) stops what we started; a container left behind by a failure goes too.
on_exit() {
	local rc=$?
	"${RT[@]}" rm -f "$NAME" "$NAME-files" >/dev/null 2>&1 || true
	(exit "$rc")
	cleanup
}
trap on_exit EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

fail() {
	log "FAIL: $*"
	log "container log (last 20 lines):"
	tail -n 20 "$WORKDIR/container.log" >&2 || true
	exit 1
}

# http_code PORT PATH: the HTTP status code of GET http://127.0.0.1:PORT/PATH.
http_code() (
	exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
	printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1:%s\r\n\r\n' "$2" "$1" >&3
	IFS=' ' read -r -t 5 _ code _ <&3 || exit 1
	echo "$code"
)

# 1. what the image is: its user, and the CA certificates in it
USER_OF_IMAGE=$("${RT[@]}" image inspect --format '{{.Config.User}}' "$IMAGE")
[[ $USER_OF_IMAGE =~ ^[1-9][0-9]*(:[0-9]+)?$ ]] || fail "the image's user is '$USER_OF_IMAGE', want a numeric non-root user"
"${RT[@]}" create --name "$NAME-files" "$IMAGE" >/dev/null
"${RT[@]}" cp "$NAME-files:/etc/ssl/certs/ca-certificates.crt" "$WORKDIR/ca.crt"
"${RT[@]}" rm "$NAME-files" >/dev/null
cmp -s "$WORKDIR/ca.crt" "${CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" || fail "the image's CA certificates differ from this machine's"
log "image $IMAGE: user $USER_OF_IMAGE, CA certificates $(grep -c 'BEGIN CERTIFICATE' "$WORKDIR/ca.crt")"

# 2. the sink, and the container on free loopback ports
start sink "$WORKDIR/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink.addr" \
	--quiet --stats-every 0 --summary-file "$WORKDIR/sink.json"
wait_addr_file "$WORKDIR/sink.addr" "$PID_sink" "$WORKDIR/sink.log"
SINK_PORT=$(<"$WORKDIR/sink.addr")
SINK_PORT=${SINK_PORT##*:}
read -r GRPC_PORT HTTP_PORT METRICS_PORT HEALTH_PORT <<<"$(free_ports 4)"
# One sender, in the htpasswd the configuration reads from the Secret's mount.
SENDER=smoke:smoke-secret
mkdir -p "$WORKDIR/senders"
echo "$SENDER" >"$WORKDIR/senders/htpasswd"
chmod 755 "$WORKDIR/senders"
chmod 644 "$WORKDIR/senders/htpasswd"

# In the foreground of a background job: a signal to the runtime's client reaches the
# collector (podman's and docker's --sig-proxy), as a kubelet's SIGTERM would.
start container "$WORKDIR/container.log" "${RT[@]}" run --rm --name "$NAME" --network host \
	-e "SENTRY_DSN=http://public@127.0.0.1:$SINK_PORT/1" \
	-v "$WORKDIR/senders:/etc/otelcol-sentry-senders:ro" \
	"$IMAGE" --config=/etc/otelcol-sentry/config.yaml \
	"--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:$GRPC_PORT" \
	"--set=receivers::otlp::protocols::http::endpoint=127.0.0.1:$HTTP_PORT" \
	"--set=extensions::healthcheckv2::http::endpoint=127.0.0.1:$HEALTH_PORT" \
	"--set=service::telemetry::metrics::readers=[{pull: {exporter: {prometheus: {host: 127.0.0.1, port: $METRICS_PORT}}}}]"
wait_port "$HEALTH_PORT" "$PID_container" "the container (see $WORKDIR/container.log)" 60
wait_port "$HTTP_PORT" "$PID_container" "the container's OTLP receiver" 30

# 3. health: 503 while starting, then 200 with the exporter's status in the body
code=""
for ((i = 0; i < 100; i++)); do
	code=$(http_code "$HEALTH_PORT" /status || true)
	[[ $code == 200 ]] && break
	sleep 0.1
done
[[ $code == 200 ]] || fail "GET :$HEALTH_PORT/status answered '$code', want 200"
http_get "$HEALTH_PORT" '/status?verbose' >"$WORKDIR/status.json"
grep -q '"exporter:sentry"' "$WORKDIR/status.json" || fail "/status?verbose does not show exporter:sentry: $(head -c 400 "$WORKDIR/status.json")"
log "health :$HEALTH_PORT/status 200; $(grep -o '"status":"[A-Za-z]*"' "$WORKDIR/status.json" | head -n 1)"

# 4. a request without credentials is refused; traffic with them, drained into the sink
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary '{}' "http://127.0.0.1:$HTTP_PORT/v1/traces" || true)
[[ $code == 401 ]] || fail "a request without credentials answered '$code', want 401"
start gen "$WORKDIR/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP_PORT" --basic-auth "$SENDER" --duration "${SMOKE_DURATION:-5s}" \
	--rate "${SMOKE_RATE:-300}" --services 2 --logs-per-trace 1 --exception-ratio 0.05 --workers 2 --batch 50 \
	--summary-file "$WORKDIR/gen.json"
wait "$PID_gen" || fail "otlpgen failed: $(tail -n 3 "$WORKDIR/gen.log")"
forget_pid "$PID_gen"
wait_drained "$METRICS_PORT" "$WORKDIR/sink.json" 60
read -r GSPANS GLOGS <<<"$("$SINK" --query "$WORKDIR/gen.json" spans logs)"
read -r SSPANS SLOGS INVALID <<<"$("$SINK" --query "$WORKDIR/sink.json" spans logs invalid_envelopes)"
[[ $INVALID == 0 ]] || fail "the sink rejected $INVALID envelopes"
[[ $GSPANS -gt 0 && $SSPANS == "$GSPANS" ]] || fail "otlpgen sent $GSPANS spans, the sink stored $SSPANS"
[[ $SLOGS == "$GLOGS" ]] || fail "otlpgen sent $GLOGS log records, the sink stored $SLOGS"
code=$(http_code "$HEALTH_PORT" /status || true)
[[ $code == 200 ]] || fail "GET /status answered '$code' after the traffic"

# 5. SIGTERM: a clean exit, in time
started=$SECONDS
kill -TERM "$PID_container"
wait_pid "$PID_container" 20 || fail "the container did not stop within 20 s of SIGTERM"
rc=0
wait "$PID_container" || rc=$?
forget_pid "$PID_container"
[[ $rc == 0 ]] || fail "the container exited with status $rc after SIGTERM"
stopped=$((SECONDS - started))
if grep -q '"level":"error"' "$WORKDIR/container.log"; then
	fail "the collector logged errors: $(grep '"level":"error"' "$WORKDIR/container.log" | head -n 3 | cut -c1-300)"
fi
log "OK: $IMAGE with ${RT[*]}: health 200, no credentials 401, $SSPANS spans and $SLOGS log records stored of $GSPANS and $GLOGS sent, 0 invalid; exit 0 ${stopped}s after SIGTERM"
