#!/usr/bin/env bash
# The README's test command. Installs what is missing, builds from scratch and runs every test:
# unit tests first (also as an unprivileged user, to show they need no root), then the privileged
# ones (namespaces, BPF, DPDK) one at a time. Then the Debian package installed and run
# (ci/package-check.sh), the product's translation units (not the tests') again through clang
# (checked, not compiled to code), and last the same build folder without DPDK and without eBPF
# in turn (ninja rebuilds only what the option changes) with the unit tests.
#
# COLLIDE_REQUIRE_PRIVILEGED=1 (CI sets it) turns a privileged test's skip into a failure.
# COLLIDE_SKIP_CLANG=1 skips the clang check (quicker local runs).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

ci/install-deps.sh

build="$root/build/ci-gcc"
rm -rf "$build"
# Optimised as users build it, with line tables only (-g1) rather than full debug information:
# backtraces and sanitizer reports still name files and lines, and the build takes about a
# quarter less time (full -g doubles the compile time of a test file full of gtest macros).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++
cmake --build "$build" -j"$(nproc)"

echo "== unit tests (at ${SECONDS}s)"
ctest --test-dir "$build" -L unit -LE quarantine --output-on-failure -j"$(nproc)"

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  echo "== unit tests as an unprivileged user (at ${SECONDS}s)"
  ci/unprivileged-ctest.sh "$root" "$build" -L unit -LE quarantine -j"$(nproc)" -Q
fi

echo "== privileged tests (COLLIDE_REQUIRE_PRIVILEGED=${COLLIDE_REQUIRE_PRIVILEGED:-0}) (at ${SECONDS}s)"
# Each runs once: a flaky test is fixed, or listed with the reason in tests/quarantine.txt (the
# ctest label `quarantine`), never retried until it passes. Quarantined tests run after the others;
# their result is reported and does not fail the build.
ctest --test-dir "$build" -LE 'unit|quarantine' --output-on-failure
echo "== quarantined tests (tests/quarantine.txt; reported, not failing the build) (at ${SECONDS}s)"
if ctest --test-dir "$build" -L quarantine --output-on-failure; then
  echo "quarantined tests passed"
else
  echo "QUARANTINED TESTS FAILED (not failing the build); see tests/quarantine.txt for why each is there"
fi

# What fleets install: the .deb of this build, installed on this machine, its command run (a
# scenario on a virtual testbed included), then purged.
if [ "$(id -u)" -eq 0 ]; then
  echo "== the Debian package: built, installed, run, purged (at ${SECONDS}s)"
  ci/package-check.sh "$build"
else
  echo "== the Debian package: skipped (installing it needs root)"
fi

if [ "${COLLIDE_SKIP_CLANG:-0}" != "1" ]; then
  echo "== clang: the product's translation units checked, no code generated (at ${SECONDS}s)"
  clang_build="$root/build/ci-clang"
  rm -rf "$clang_build"
  cmake -DCOMPILE_COMMANDS="$build/compile_commands.json" -DOUT="$clang_build" -P ci/clang-check.cmake
  ninja -C "$clang_build" -j"$(nproc)"
  echo "clang check passed"
fi

# Hosts without DPDK or eBPF: the README offers both options. The same folder reconfigured, so
# ninja rebuilds only what an option changes (its libraries, the `collide` command, the tests
# linked to them); every unit test must pass in each. Last, so that nothing after them needs the
# full build back (the folder is left as the last variant built).
for variant in -DCOLLIDE_WITH_DPDK=OFF -DCOLLIDE_WITH_EBPF=OFF; do
  echo "== build with $variant (at ${SECONDS}s)"
  cmake -S . -B "$build" -DCOLLIDE_WITH_DPDK=ON -DCOLLIDE_WITH_EBPF=ON "$variant" >/dev/null
  cmake --build "$build" -j"$(nproc)"
  ctest --test-dir "$build" -L unit -LE quarantine --output-on-failure -j"$(nproc)"
done

echo "== test.sh done in ${SECONDS}s"
