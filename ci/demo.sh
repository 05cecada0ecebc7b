#!/usr/bin/env bash
# The README's main command: installs what is missing, builds collide, and runs the demo scenario
# (configs/demo.yaml): 4 ranks on a virtual leaf-spine fabric of network namespaces, clean and
# with 1% loss under go-back-N and selective repeat. Needs root (namespaces, BPF, AF_XDP).
# Usage: ci/demo.sh [scenario.yaml]   (results go to collide-results/<scenario name>)
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-configs/demo.yaml}

if [ "$(id -u)" -ne 0 ]; then
  echo "ci/demo.sh: needs root (it builds network namespaces and loads BPF programs)" >&2
  exit 2
fi
ci/install-deps.sh
build=build/demo
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLLIDE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target collide
"$build/orchestrator/collide" run "$scenario"
