#!/usr/bin/env bash
# The zstd -> gzip fallback through the built collector: sentrysink --old-relay decodes
# Content-Encoding as a Relay that predates zstd (zstd taken for identity, so the body is
# refused with 400). Sends OLDRELAY_DURATION (10s) of traces and logs at the exporter's
# defaults and fails unless every span, log and error event arrived (gzip), the fallback
# was counted exactly once, and the only refused envelopes were zstd ones.
# Needs `make otelcol sink`. Everything listens on 127.0.0.1 only.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_binaries
make_workdir oldrelay
install_trap

start sink "$WORKDIR/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink.addr" \
	--old-relay --quiet --stats-every 0 --summary-file "$WORKDIR/sink.json"
wait_addr_file "$WORKDIR/sink.addr" "$PID_sink" "$WORKDIR/sink.log"
SINK_ADDR=$(<"$WORKDIR/sink.addr")
read -r GRPC HTTP METRICS <<<"$(free_ports 3)"
write_collector_config "$WORKDIR/collector.yaml" "$GRPC" "$HTTP" "$METRICS" "${SINK_ADDR##*:}" ""
start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml"
wait_port "$HTTP" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
wait_port "$METRICS" "$PID_collector" "the collector's metrics endpoint" 30

"$GEN" --endpoint "127.0.0.1:$HTTP" --duration "${OLDRELAY_DURATION:-10s}" --rate 2000 --workers 2 --batch 100 \
	--quiet --summary-file "$WORKDIR/gen.json" | tail -n 1
wait_drained "$METRICS" "$WORKDIR/sink.json" 60
scrape "$METRICS" "$WORKDIR/metrics.prom"

read -r gspans glogs gexc <<<"$("$SINK" --query "$WORKDIR/gen.json" spans logs exceptions)"
read -r sspans slogs serr invalid gz <<<"$("$SINK" --query "$WORKDIR/sink.json" spans logs errors invalid_envelopes content_encoding.gzip)"
fallbacks=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_compression_fallbacks)
refused=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_requests 'status="400"')
echo "sent: spans=$gspans logs=$glogs exceptions=$gexc"
echo "stored: spans=$sspans logs=$slogs errors=$serr (gzip envelopes $gz); refused zstd bodies $invalid; fallbacks $fallbacks"
[[ "$sspans" == "$gspans" && "$slogs" == "$glogs" && "$serr" == "$gexc" ]] || die "items lost"
[[ "$fallbacks" == 1 ]] || die "fallbacks counted $fallbacks times, want 1"
[[ "$invalid" == "$refused" && "$invalid" -gt 0 ]] || die "refused $invalid at the sink, 400 answers $refused"
log "OK: every item stored once through the gzip fallback"
