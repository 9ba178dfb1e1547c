# shellcheck shell=bash
# Spotlight (Sentry's local receiver and UI, npm @spotlightjs/spotlight, pinned in
# scripts/spotlight/package-lock.json) for spotlight.sh and spotlight-check.sh: install it,
# start it on a free port, and start the built collector at the exporter's defaults with its
# DSN pointed at it. Source after lib.sh.
#
# What Spotlight 4.11.8 does that a user should know:
#   - it listens on every interface (Node's listen without a host), without authentication:
#     anyone who reaches the port reads what it holds, and can send to it;
#   - it sends its own errors, traces and metrics to Sentry (a DSN built into it, no setting
#     turns that off). Its Sentry SDK honours https_proxy, so these scripts point that at a
#     closed loopback port: its telemetry fails on this machine and never leaves it;
#   - it keeps the last 500 envelopes, and does not show span v2 items, so the collector
#     here uses `traces_as: transactions`.

SPOTLIGHT_DIR="$ROOT/scripts/spotlight"
SPOTLIGHT="$SPOTLIGHT_DIR/node_modules/.bin/spotlight"
PID_spotlight=""
# SPOTLIGHT_ENV: how Spotlight runs here: its own SDK's https_proxy a closed loopback port
# (set by start_spotlight), and no SENTRY_SPOTLIGHT (which would send its telemetry into itself).
SPOTLIGHT_ENV=()

# install_spotlight: npm ci from the committed lockfile (once; again when the lockfile changed).
install_spotlight() {
	command -v npm >/dev/null || die "npm is missing (Debian: apt-get install -y nodejs npm)"
	if [[ ! -x "$SPOTLIGHT" || "$SPOTLIGHT_DIR/package-lock.json" -nt "$SPOTLIGHT_DIR/node_modules/.package-lock.json" ]]; then
		log "installing Spotlight from the npm registry (scripts/spotlight/package-lock.json)"
		npm ci --prefix "$SPOTLIGHT_DIR" --no-audit --no-fund --loglevel=error >&2
	fi
}

# start_spotlight PORT LOGFILE: Spotlight's server on PORT, its own telemetry kept on loopback.
start_spotlight() {
	local port=$1 logfile=$2 closed
	closed=$(free_ports 1 | tr -d ' ')
	SPOTLIGHT_ENV=(env -u SENTRY_SPOTLIGHT -u no_proxy "https_proxy=http://127.0.0.1:$closed" "http_proxy=http://127.0.0.1:$closed")
	start spotlight "$logfile" "${SPOTLIGHT_ENV[@]}" "$SPOTLIGHT" server --port "$port"
	wait_port "$port" "$PID_spotlight" "Spotlight (see $logfile)" 60
}

# start_spotlight_collector PORT GRPC HTTP METRICS: the collector, `traces_as: transactions` and
# otherwise the exporter's defaults (zstd, no compression setting), its DSN Spotlight's.
start_spotlight_collector() {
	local port=$1 grpc=$2 http=$3 metrics=$4
	write_collector_config "$WORKDIR/collector.yaml" "$grpc" "$http" "$metrics" "$port" "traces_as: transactions"
	# shellcheck disable=SC2046 # profiles_gate is one word or none
	start collector "$WORKDIR/collector.log" "$OTELCOL" --config "$WORKDIR/collector.yaml" $(profiles_gate)
	wait_port "$http" "$PID_collector" "the collector (see $WORKDIR/collector.log)" 60
	wait_port "$metrics" "$PID_collector" "the collector's metrics endpoint" 30
}
