#!/usr/bin/env bash
# A/B: sentry mode with several builds, alternating, one window each per round
cd /work/wt/perf
ROUNDS=${ROUNDS:-4}
MODE=${MODE:-sentry}
for r in $(seq 1 $ROUNDS); do
  for b in $BINS; do
    out=$(COMPARE_OTELCOL=bin/$b COMPARE_THROUGHPUT=0 COMPARE_ROUNDS=1 COMPARE_MODES="$MODE" ./scripts/compare.sh 2>&1 | grep "round 1\]" | head -1)
    echo "$r $b $(echo "$out" | grep -o '[0-9.]* µs CPU/item')"
  done
  if [[ -n "${PEER:-}" ]]; then
    out=$(COMPARE_OTELCOL=bin/otelcol-compare-before COMPARE_THROUGHPUT=0 COMPARE_ROUNDS=1 COMPARE_MODES="$PEER" ./scripts/compare.sh 2>&1 | grep "round 1\]" | head -1)
    echo "$r $PEER $(echo "$out" | grep -o '[0-9.]* µs CPU/item')"
  fi
done
