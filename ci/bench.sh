#!/usr/bin/env bash
# ci/bench.sh <area>: builds and runs the benchmarks of one area. Every benchmark prints ratios
# against a peer measured in the same run; the output ends with one line per figure:
#   figure <name> <value> <unit>
# Areas: wire (framing), replayer (transport and data plane)
set -euo pipefail
cd "$(dirname "$0")/.."
area=${1:-}
build=${COLLIDE_BENCH_BUILD:-build/bench}

usage() { echo "usage: ci/bench.sh <area>   (areas: wire, replayer)" >&2; exit 2; }
[ -n "$area" ] || usage

ci/install-deps.sh >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT

case "$area" in
  wire)
    cmake --build "$build" -j"$(nproc)" --target replayer_wire_bench
    "$build/replayer/replayer_wire_bench" --benchmark_min_time=0.5 | tee "$log"
    ;;
  replayer)
    cmake --build "$build" -j"$(nproc)" --target replayer_goodput_vs_loss_bench replayer_tx_rate_bench
    "$build/replayer/replayer_goodput_vs_loss_bench" | tee "$log"
    "$build/replayer/replayer_tx_rate_bench" 3 | tee -a "$log"
    ;;
  *) usage ;;
esac

echo "---"
grep '^figure ' "$log"
