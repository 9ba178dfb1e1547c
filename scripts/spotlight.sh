#!/usr/bin/env bash
# make spotlight: see the exporter's output as Sentry shows it, in Spotlight (Sentry's local
# receiver and UI). Installs Spotlight (scripts/spotlight/), starts it and the built collector
# at the exporter's defaults with its DSN pointed at Spotlight, sends SPOTLIGHT_DURATION (60s)
# of the demo's traffic, prints the URL to open, and keeps both running until Ctrl-C; then
# stops what it started, and only that. What Spotlight does on your machine: spotlightlib.sh.
#
# Environment: SPOTLIGHT_PORT (a free port), SPOTLIGHT_DURATION (60s), SPOTLIGHT_RATE
# (spans/s, 20: Spotlight keeps the last 500 envelopes), KEEP_WORKDIR=1.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=spotlightlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/spotlightlib.sh"

need_binaries
install_spotlight
make_workdir spotlight
install_trap
trap 'log "stopping what this script started"; exit 0' INT # Ctrl-C is how it ends

PORT=${SPOTLIGHT_PORT:-$(free_ports 1 | tr -d ' ')}
read -r GRPC HTTP METRICS <<<"$(free_ports 3)"
start_spotlight "$PORT" "$WORKDIR/spotlight.log"
start_spotlight_collector "$PORT" "$GRPC" "$HTTP" "$METRICS"
log "Spotlight on :$PORT, the collector's OTLP on 127.0.0.1:$GRPC (gRPC) and :$HTTP (HTTP)"

log "sending ${SPOTLIGHT_DURATION:-60s} of the demo's traffic"
start gen "$WORKDIR/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP" --duration "${SPOTLIGHT_DURATION:-60s}" \
	--rate "${SPOTLIGHT_RATE:-20}" --services 3 --workers 1 --batch 20 --quiet
wait "$PID_gen" || log "otlpgen reported failures"
forget_pid "$PID_gen"
tail -n 1 "$WORKDIR/gen.log"

echo
echo "  Open http://localhost:$PORT/ (Traces, Errors, Logs)."
echo "  Send your own OTLP to 127.0.0.1:$GRPC (gRPC) or http://127.0.0.1:$HTTP (HTTP)."
echo "  Spotlight listens on every interface, without authentication. Ctrl-C stops both."
echo
wait "$PID_collector"
