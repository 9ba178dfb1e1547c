#!/usr/bin/env bash
# mutate.sh: mutation testing of the packages named in MUTATE_PKGS (docs/mutations.md).
# For each: gremlins (its default mutators, --timeout-coefficient 30), then cmd/mutantcheck
# for the mutants gremlins reports NOT COVERED (conditions of case clauses). Reports land in
# bin/mutate/<package>.{txt,json} and bin/mutate/<package>-cases.txt.
#
# A mutant can make a test allocate without end (a loop that never settles, a queue that
# never drains): a watchdog kills any test binary past MUTATE_MAX_RSS_KB of resident memory
# (3 GB by default), so that the machine stays up; its test then fails, and the mutant is
# caught, as a timeout would catch it. Each kill is logged in bin/mutate/watchdog.log.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
GREMLINS=${GREMLINS:-github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0}
MUTATE_PKGS=${MUTATE_PKGS:-ratelimit internal/account internal/assemble internal/gate internal/concurrency internal/membudget internal/send}
MUTATE_MAX_RSS_KB=${MUTATE_MAX_RSS_KB:-3000000}
OUT=bin/mutate
mkdir -p "$OUT"
: > "$OUT/watchdog.log"

watchdog() {
	while sleep 1; do
		for pid in $(pgrep -f '\.test( |$)' || true); do
			rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
			if [[ -n $rss && $rss -gt $MUTATE_MAX_RSS_KB ]]; then
				kill -9 "$pid" 2>/dev/null || true
				echo "$(date +%T) killed $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-120) at ${rss} kB" >> "$OUT/watchdog.log"
			fi
		done
	done
}
watchdog &
WATCHDOG=$!
trap 'kill $WATCHDOG 2>/dev/null || true' EXIT

for p in $MUTATE_PKGS; do
	n=$(basename "$p")
	echo "== $p"
	if ! $GO run "$GREMLINS" unleash --workers 2 --timeout-coefficient 30 -E 'accounttest/' \
		-o "$OUT/$n.json" "./$p" > "$OUT/$n.txt" 2>&1; then
		cat "$OUT/$n.txt"
		exit 1
	fi
	grep -E 'LIVED|TIMED OUT|NOT VIABLE|^Killed|^Timed|efficacy|coverage' "$OUT/$n.txt" || true
	$GO run ./cmd/mutantcheck -report "$OUT/$n.json" -pkg "./$p" | tee "$OUT/$n-cases.txt"
done
if [[ -s $OUT/watchdog.log ]]; then
	echo "== test binaries the watchdog killed (their mutants count as caught):"
	cat "$OUT/watchdog.log"
fi
