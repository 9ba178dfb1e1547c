# shellcheck shell=bash
# Container runtime helpers for image.sh and image-smoke.sh. Source after lib.sh.
#
# Podman as Debian packages it (podman, runc) runs containers on machines like CI's, with
# two settings that are harmless elsewhere: the runc runtime (crun refuses cgroups in
# hybrid mode) and no default ulimits (a sandbox may forbid raising RLIMIT_NOFILE/NPROC),
# from a containers.conf of our own unless CONTAINERS_CONF names one. Docker is used when
# podman is absent and a docker engine answers. IMAGE_RUNTIME=podman|docker picks one.

# RT: the runtime's command and global flags, set by container_runtime; RT_WHY: why none works.
RT=()
RT_WHY=""

# container_runtime: set RT to a runtime that answers, or return 1 with RT_WHY saying why
# none does.
container_runtime() {
	RT=()
	RT_WHY=""
	local want=${IMAGE_RUNTIME:-} conf out
	if [[ -z $want || $want == podman ]]; then
		if command -v podman >/dev/null; then
			conf=${CONTAINERS_CONF:-}
			if [[ -z $conf ]]; then
				mkdir -p "$BIN"
				conf="$BIN/containers.conf"
				printf '[containers]\ndefault_ulimits = []\n' >"$conf"
			fi
			RT=(env "CONTAINERS_CONF=$conf" podman)
			if command -v runc >/dev/null; then
				RT+=(--runtime runc)
			fi
			if out=$("${RT[@]}" info 2>&1 >/dev/null); then
				return 0
			fi
			RT_WHY="podman info failed: $(printf '%s' "$out" | tail -n 1); "
			RT=()
		else
			RT_WHY="podman is not installed (Debian: apt-get install podman runc); "
		fi
	fi
	if [[ -z $want || $want == docker ]]; then
		if command -v docker >/dev/null; then
			if out=$(docker info 2>&1 >/dev/null); then
				RT=(docker)
				return 0
			fi
			RT_WHY+="docker info failed (no engine answers): $(printf '%s' "$out" | tail -n 1)"
		else
			RT_WHY+="docker is not installed"
		fi
	fi
	return 1
}

# image_version: the distribution's version (builder-config.yaml dist.version).
image_version() {
	awk '/^dist:/ { d = 1; next } d && /^[^ #]/ { d = 0 } d && $1 == "version:" { print $2; exit }' "$ROOT/builder-config.yaml"
}
