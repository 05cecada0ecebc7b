#!/usr/bin/env bash
# Builds the Debian package from a finished build folder, installs it on this machine the way a
# fleet's host would, and runs the installed command: --version, `collide plan` on every example
# scenario the package ships (from /, so nothing is found through the checkout), the agent's
# systemd unit through systemd-analyze verify, and a small scenario on a virtual testbed
# (tests/packaging/package-smoke.yaml: testbed, agents, replays and an eBPF loss fault, all from
# /usr/bin/collide). The package is purged at the end, also when a step failed, so the machine is
# left as it was; a machine that already has collide installed is refused rather than changed.
#
#   ci/package-check.sh [build folder, default build/ci-gcc]     # as root
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(realpath "${1:-build/ci-gcc}")

[ "$(id -u)" -eq 0 ] || { echo "package-check: needs root (it installs a package)" >&2; exit 1; }
[ -f "$build/CPackConfig.cmake" ] || { echo "package-check: $build: no CPackConfig.cmake (not a configured build folder)" >&2; exit 1; }
status=$(dpkg-query -W -f='${db:Status-Status}' collide 2>/dev/null || true)
if [ -n "$status" ] && [ "$status" != "not-installed" ]; then
  echo "package-check: dpkg knows a collide package here ($status); it would be replaced and then purged, so nothing is done" >&2
  exit 1
fi

out="$build/package"
rm -rf "$out"
cpack -G DEB --config "$build/CPackConfig.cmake" -B "$out" >/dev/null
debs=("$out"/collide_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || { echo "package-check: cpack wrote no single collide_*.deb in $out" >&2; exit 1; }
deb=${debs[0]}
echo "package-check: built $deb ($(du -h "$deb" | cut -f1))"
ci/deb-contents.sh "$deb"

scratch=$(mktemp -d /tmp/collide-package-check.XXXXXX)
cleanup() {
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq collide >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends "$deb" >/dev/null

version=$(dpkg-deb -f "$deb" Version)
said=$(/usr/bin/collide --version)
[ "$said" = "collide $version" ] || { echo "package-check: collide --version said '$said', the package is $version" >&2; exit 1; }
echo "package-check: $said"

systemd-analyze verify /usr/lib/systemd/system/collide-agent.service

# Every shipped scenario, from a folder that has no configs/ beside it.
(cd / && for scenario in $(find /usr/share/collide/configs -name '*.yaml' -not -path '*/models/*' | sort); do
   /usr/bin/collide plan "$scenario" >/dev/null || { echo "package-check: collide plan $scenario failed" >&2; exit 1; }
 done)
echo "package-check: collide plan passed on every shipped scenario"

cp tests/packaging/package-smoke.yaml "$scratch/"
(cd "$scratch" && /usr/bin/collide run package-smoke.yaml --output "$scratch/out" --run-timeout 120 >"$scratch/run.log" 2>&1) ||
  { cat "$scratch/run.log" >&2; echo "package-check: collide run of the smoke scenario failed" >&2; exit 1; }
python3 - "$scratch/out/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
variants = {v["name"]: v for v in report["variants"]}
problems = [f"{name}: {v['failed_runs']} of {v['runs']} runs failed"
            for name, v in variants.items() if int(v["failed_runs"]) != 0 or int(v["runs"]) != 1]
acted = sum(int(f.get("packets_acted", 0)) for f in variants.get("loss", {}).get("faults", []))
if acted == 0:
    problems.append("the loss fault acted on no packet")
if set(variants) != {"baseline", "loss"}:
    problems.append(f"variants are {sorted(variants)}, not baseline and loss")
if problems:
    sys.exit("package-check: " + sys.argv[1] + ": " + "; ".join(problems))
print(f"package-check: the installed collide ran the smoke scenario, the loss fault dropped {acted} packets")
PY
