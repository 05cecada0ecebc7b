#!/usr/bin/env bash
# Checks what a collide .deb holds, without installing it: the command, the agent's systemd unit
# and its settings (a conffile), the certificate folder readable by root alone, the deploy files,
# the example scenarios with their model presets, the copyright; nothing else on PATH (no tests,
# no benchmarks, no BPF object files: those are compiled into the command); the dependencies
# dpkg-shlibdeps found and the ones written by hand.
#
#   ci/deb-contents.sh build/ci-gcc/package/collide_0.1.0_amd64.deb
# Exit 0 when all holds, 1 with every problem on stderr otherwise.
set -euo pipefail
deb=${1:?usage: deb-contents.sh <collide .deb>}
[ -f "$deb" ] || { echo "deb-contents: $deb: no such file" >&2; exit 1; }

problems=0
problem() { echo "deb-contents: $deb: $*" >&2; problems=$((problems + 1)); }

# "<mode> <path>" per entry, paths without the leading "." and trailing "/".
listing=$(dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); sub(/\/$/, "", p); print $1, p }')
has() { grep -qx -- "$1 $2" <<<"$listing" || problem "no $2 with mode $1"; }

has -rwxr-xr-x /usr/bin/collide
has -rw-r--r-- /usr/lib/systemd/system/collide-agent.service
has -rw-r--r-- /etc/collide/agent.env
has drwx------ /etc/collide/certs
has -rw-r--r-- /usr/share/collide/deploy/README.md
has -rw-r--r-- /usr/share/collide/deploy/collide-agent-daemonset.yaml
has -rwxr-xr-x /usr/share/collide/deploy/collide-agents.sbatch
has -rw-r--r-- /usr/share/collide/configs/demo.yaml
has -rw-r--r-- /usr/share/collide/configs/models/llama3-70b.yaml
has -rw-r--r-- /usr/share/doc/collide/copyright

# Only collide on PATH; no test, benchmark or BPF object anywhere.
while read -r path; do
  problem "holds $path, which is not for hosts"
done < <(awk '{ print $2 }' <<<"$listing" |
           grep -E '^/usr/s?bin/.|_test$|_bench$|\.bpf\.o$|/tests?/' | grep -vx /usr/bin/collide || true)

conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles 2>/dev/null || true)
[ "$conffiles" = "/etc/collide/agent.env" ] || problem "conffiles are '$conffiles', not /etc/collide/agent.env"

depends=$(dpkg-deb -f "$deb" Depends)
dep_names=$(tr ',' '\n' <<<"$depends" | awk '{ print $1 }')
for dep in iproute2 bpftool librte-net-af-xdp23 libbpf1 libxdp1 librte-eal23 libstdc++6; do
  grep -qxF -- "$dep" <<<"$dep_names" || problem "Depends lacks $dep: $depends"
done
[ "$(dpkg-deb -f "$deb" Package)" = collide ] || problem "package is not named collide"

# Stripped: the build's debug information would make the command some 200 MB.
size=$(dpkg-deb --fsys-tarfile "$deb" | tar -tv ./usr/bin/collide | awk '{ print $3 }')
[ "$size" -lt 50000000 ] || problem "/usr/bin/collide is $size bytes: not stripped?"

if [ "$problems" -gt 0 ]; then
  echo "deb-contents: $problems problem(s)" >&2
  exit 1
fi
echo "deb-contents: $deb holds what a host needs ($(wc -l <<<"$listing") entries)"
