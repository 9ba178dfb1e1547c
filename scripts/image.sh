#!/usr/bin/env bash
# make image: the gateway's container image from Containerfile, with podman or docker
# (scripts/containerlib.sh). The build context is staged in bin/image-context: the static
# bin/otelcol-sentry, this machine's CA certificates and deploy/kubernetes/collector.yaml
# as the default configuration. No registry is needed (FROM scratch).
#
# Environment: IMAGE (default otelcol-sentry:<builder-config.yaml dist.version>),
# IMAGE_RUNTIME (podman|docker), CA_CERTS (default /etc/ssl/certs/ca-certificates.crt).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=containerlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/containerlib.sh"

VERSION=$(image_version)
IMAGE=${IMAGE:-otelcol-sentry:$VERSION}
CA_CERTS=${CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}

[[ -x "$OTELCOL" ]] || die "$OTELCOL is missing; run 'make otelcol' first"
# A scratch image has no dynamic loader: the binary must be static (make otelcol builds it so).
if LC_ALL=C grep -qa 'ld-linux' "$OTELCOL"; then
	die "$OTELCOL is dynamically linked; rebuild it with 'make otelcol' (CGO_ENABLED=0)"
fi
[[ -s "$CA_CERTS" ]] || die "$CA_CERTS is missing (Debian: apt-get install ca-certificates)"
container_runtime || die "no container runtime works here: $RT_WHY"

CTX="$BIN/image-context"
rm -rf "$CTX"
mkdir -p "$CTX"
install -m 0755 "$OTELCOL" "$CTX/otelcol-sentry"
install -m 0644 "$CA_CERTS" "$CTX/ca-certificates.crt"
install -m 0644 "$ROOT/deploy/kubernetes/collector.yaml" "$CTX/config.yaml"

log "building $IMAGE with ${RT[*]}"
"${RT[@]}" build --build-arg "VERSION=$VERSION" -t "$IMAGE" -f "$ROOT/Containerfile" "$CTX"
size=$("${RT[@]}" image inspect --format '{{.Size}}' "$IMAGE")
log "built $IMAGE ($((size / 1048576)) MiB)"
