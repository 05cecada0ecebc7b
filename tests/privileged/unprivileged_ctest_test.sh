#!/usr/bin/env bash
# ci/unprivileged-ctest.sh runs a checkout's unit tests as nobody even where the checkout sits
# under a folder nobody cannot enter (root's 0700 home on Debian): a test that runs as nobody
# and reads a fixture under the checkout passes, and a failing one still fails the script.
#
#   unprivileged_ctest_test.sh PATH/TO/ci/unprivileged-ctest.sh
set -euo pipefail
script=$1

missing=""
[ "$(id -u)" -eq 0 ] || missing="root"
command -v setpriv >/dev/null || missing="$missing setpriv"
command -v unshare >/dev/null || missing="$missing unshare"
if [ -n "$missing" ]; then
  echo "needs: $missing"
  [ "${COLLIDE_REQUIRE_PRIVILEGED:-0}" = 1 ] && exit 1
  exit 77
fi

home=$(mktemp -d /tmp/collide-0700-home.XXXXXX)
trap 'rm -rf "$home"' EXIT
chmod 0700 "$home"
checkout="$home/src/checkout"
mkdir -p "$checkout/fixtures" "$checkout/build"
chmod 0755 "$home/src" "$checkout" "$checkout/fixtures" "$checkout/build"
echo "fixture" > "$checkout/fixtures/input.txt"
chmod 0644 "$checkout/fixtures/input.txt"

write_tests() {  # $1: the command the second test runs
  cat > "$checkout/build/CTestTestfile.cmake" <<CTEST
add_test(runs_as_nobody_and_reads_a_fixture "/bin/sh" "-c"
         "test \"\$(id -u)\" = 65534 && grep -q fixture $checkout/fixtures/input.txt")
set_tests_properties(runs_as_nobody_and_reads_a_fixture PROPERTIES LABELS unit)
add_test(second "/bin/sh" "-c" "$1")
set_tests_properties(second PROPERTIES LABELS unit)
CTEST
  chmod 0644 "$checkout/build/CTestTestfile.cmake"
}

write_tests true
output=$("$script" "$checkout" "$checkout/build" -L unit 2>&1) || {
  echo "$output"; echo "FAIL: the tests did not pass from under a 0700 folder"; exit 1; }
echo "$output"
grep -q "0 tests failed out of 2" <<<"$output" || { echo "FAIL: both tests did not run"; exit 1; }

write_tests false
status=0
"$script" "$checkout" "$checkout/build" -L unit >/dev/null 2>&1 || status=$?
[ "$status" -eq 1 ] || { echo "FAIL: a failing test gave exit $status, not 1"; exit 1; }
echo "PASS"
