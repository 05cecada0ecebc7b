#!/usr/bin/env bash
# Builds the Debian package of a build folder into a scratch folder (as `cpack -G DEB` does for a
# release) and checks what it holds with ci/deb-contents.sh: an install rule that ships a test or
# a benchmark, drops the agent's unit or its settings, or a dependency that goes missing fails it.
#   deb_contents_test.sh <build folder> <ci/deb-contents.sh>
set -euo pipefail
build=${1:?build folder}
check=${2:?deb-contents.sh}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/collide-deb-contents.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch" >"$scratch/cpack.log" 2>&1 ||
  { cat "$scratch/cpack.log" >&2; echo "cpack failed" >&2; exit 1; }
debs=("$scratch"/collide_*.deb)
[ -f "${debs[0]}" ] || { cat "$scratch/cpack.log" >&2; echo "cpack wrote no collide_*.deb" >&2; exit 1; }
"$check" "${debs[0]}"
