#!/usr/bin/env bash
# A receiver that answers every envelope 200 with HUGE_HEADER_BYTES (32 MiB) of headers, as
# a broken or hostile proxy in front of Sentry might (sentrysink --huge-headers), fed
# HUGEHEADERS_RATE (300) spans/s for HUGEHEADERS_DURATION (20s) at the exporter's
# defaults (telemetry level normal). Samples the collector's RSS every 200 ms until 10 s after the traffic ends and
# fails when its peak passes HUGEHEADERS_MAX_RSS_MB (512). HUGEHEADERS_OTELCOL runs another
# build of the collector (issue 26: 4,358 MiB with the inline HTTP client).
# Needs `make otelcol sink`. Everything listens on 127.0.0.1 only.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
OTELCOL=${HUGEHEADERS_OTELCOL:-$OTELCOL}

need_binaries
make_workdir hugeheaders
install_trap

start sink "$WORKDIR/sink.log" "$SINK" --listen 127.0.0.1:0 --addr-file "$WORKDIR/sink.addr" \
	--huge-headers "${HUGE_HEADER_BYTES:-33554432}"
wait_addr_file "$WORKDIR/sink.addr" "$PID_sink" "$WORKDIR/sink.log"
SINK_ADDR=$(<"$WORKDIR/sink.addr")
read -r GRPC HTTP METRICS <<<"$(free_ports 3)"
write_collector_config "$WORKDIR/collector.yaml" "$GRPC" "$HTTP" "$METRICS" "${SINK_ADDR##*:}" ""
# The collector's default telemetry level: at `detailed` otelhttp records, and wraps the
# client's transport.
sed -i 's/level: detailed/level: normal/' "$WORKDIR/collector.yaml"
start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml"
wait_port "$HTTP" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
wait_port "$METRICS" "$PID_collector" "the collector's metrics endpoint" 30

start gen "$WORKDIR/gen.log" "$GEN" --endpoint "127.0.0.1:$HTTP" --duration "${HUGEHEADERS_DURATION:-20s}" \
	--rate "${HUGEHEADERS_RATE:-300}" --quiet --summary-file "$WORKDIR/gen.json"
peak=0 after=0
while ((after < 50)); do
	rss=$(rss_kb "$PID_collector")
	((rss > peak)) && peak=$rss
	kill -0 "$PID_gen" 2>/dev/null || after=$((after + 1))
	sleep 0.2
done
scrape "$METRICS" "$WORKDIR/metrics.prom"
read -r gspans glogs <<<"$("$SINK" --query "$WORKDIR/gen.json" spans logs)"
sent=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_sent_items 'category="span"')
dropped=$(metric_sum "$WORKDIR/metrics.prom" otelcol_exporter_sentry_dropped_items 'category="span"')
echo "sent by otlpgen: spans=$gspans logs=$glogs; spans stored $sent, counted dropped $dropped so far (the rest waits to retry)"
grep -m1 -o 'server response headers exceeded[^"]*' "$WORKDIR/collector.log" || true
echo "collector peak RSS: $((peak / 1024)) MiB"
((peak / 1024 <= ${HUGEHEADERS_MAX_RSS_MB:-512})) || die "peak RSS $((peak / 1024)) MiB over ${HUGEHEADERS_MAX_RSS_MB:-512} MiB"
log "OK: peak RSS within ${HUGEHEADERS_MAX_RSS_MB:-512} MiB"
