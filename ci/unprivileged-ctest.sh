#!/usr/bin/env bash
# Runs a build's unit tests as an unprivileged user (nobody), to show they need no root.
#
#   ci/unprivileged-ctest.sh SOURCE_ROOT BUILD_DIR [ctest arguments...]
#
# The tests read their binaries under BUILD_DIR and fixtures under SOURCE_ROOT by absolute path,
# so nobody must be able to reach both. A checkout under a folder nobody cannot enter (root's
# home is 0700 on Debian) is made reachable in a private mount namespace: a tmpfs is mounted over
# the highest such folder and the checkout bound back at its own path, so every path stays the
# same and nothing changes outside this script's namespace. Exit 0 when the tests passed, 1 when
# they failed or the namespace could not be made, 2 for bad arguments (the reason printed).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 SOURCE_ROOT BUILD_DIR [ctest arguments...]" >&2
  exit 2
fi
source_root=$(realpath "$1")
build=$(realpath "$2")
shift 2
case "$build/" in
  "$source_root"/*) ;;
  *) echo "unprivileged tests: $build is not inside $source_root" >&2; exit 2 ;;
esac

nobody=65534
as_nobody() { setpriv --reuid=$nobody --regid=$nobody --clear-groups "$@"; }

# The highest folder above the checkout that nobody cannot enter, or nothing.
blocked=""
dir=$(dirname "$source_root")
while :; do
  if ! as_nobody test -x "$dir"; then blocked=$dir; fi
  [ "$dir" = / ] && break
  dir=$(dirname "$dir")
done

# In /tmp, which nobody can enter wherever the checkout is.
scratch=$(mktemp -d /tmp/collide-unprivileged.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
chmod 0777 "$scratch"
# Test discovery writes its lists into the build; do it now, as root, so that nobody needs write
# access there.
ctest --test-dir "$build" -N >/dev/null

# ctest keeps its logs under Testing/; nobody may write there and nowhere else in the build.
mkdir -p "$build/Testing"
chmod -R a+rwX "$build/Testing"

run_tests() {
  as_nobody env HOME="$scratch" ctest --test-dir "$build" --output-log "$scratch/ctest.log" "$@"
}

if [ -z "$blocked" ]; then
  status=0
  run_tests "$@" || status=$?
else
  echo "unprivileged tests: nobody cannot enter $blocked; running them in a private mount" \
       "namespace where it can"
  export -f run_tests as_nobody
  export build scratch nobody
  status=0
  unshare --mount --propagation private -- bash -euo pipefail -c '
    keep="$scratch/checkout"
    mkdir "$keep"
    mount --bind "$0" "$keep"
    mount -t tmpfs -o mode=0755 collide-unprivileged "$1"
    mkdir -p "$0"
    mount --bind "$keep" "$0"
    run_tests "${@:2}"' "$source_root" "$blocked" "$@" || status=$?
fi
if [ "$status" -ne 0 ]; then
  cat "$scratch/ctest.log" 2>/dev/null || true
  exit 1
fi
echo "unit tests passed without root"
