#!/usr/bin/env bash
# The README's main command: installs what is missing, builds collide, and runs the demo scenario
# (configs/demo.yaml): a synthesized training job on a virtual leaf-spine fabric of network
# namespaces (4 hosts x 2 ranks), clean and under loss on a spine link (go-back-N and selective
# repeat), a link flap and a slow receiver. Needs root (namespaces, BPF, AF_XDP).
# Usage: ci/demo.sh [scenario.yaml [collide run options...]]
#   (results go to collide-results/<scenario name>, or where --output says)
# COLLIDE_BUILD_DIR=build/x reuses a build folder that already holds a collide binary (it is
# still brought up to date); without it the demo builds its own in build/demo.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-configs/demo.yaml}

if [ "$(id -u)" -ne 0 ]; then
  echo "ci/demo.sh: needs root (it builds network namespaces and loads BPF programs)" >&2
  exit 2
fi
ci/install-deps.sh
build=${COLLIDE_BUILD_DIR:-build/demo}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCOLLIDE_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target collide
"$build/orchestrator/cli/collide" run "$scenario" "${@:2}"
