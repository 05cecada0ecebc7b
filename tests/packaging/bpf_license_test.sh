#!/usr/bin/env bash
# The eBPF programs are dual-licensed, GPL-2.0 OR BSD-2-Clause (the rest of collide is
# Apache-2.0): every source in ebpf/ says so on its first line, and every compiled program tells
# the kernel "Dual BSD/GPL", which it counts as GPL-compatible (GPL-only helpers stay usable).
#   bpf_license_test.sh <ebpf source folder> <folder of the built .bpf.o files>
set -euo pipefail
src=${1:?ebpf source folder}
objects=${2:?folder of .bpf.o files}
spdx='// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause'
problems=0
for f in "$src"/*.bpf.c "$src"/*.h; do
  [ "$(head -n1 "$f")" = "$spdx" ] || { echo "$f: first line is not '$spdx'" >&2; problems=$((problems + 1)); }
done
count=0
for o in "$objects"/*.bpf.o; do
  [ -f "$o" ] || continue
  count=$((count + 1))
  license=$(readelf -p license "$o" | sed -n 's/^ *\[ *0\] *//p')
  [ "$license" = "Dual BSD/GPL" ] || { echo "$o: license section is '$license', not 'Dual BSD/GPL'" >&2; problems=$((problems + 1)); }
done
sources=$(ls "$src"/*.bpf.c | wc -l)
[ "$count" -eq "$sources" ] || { echo "$objects: $count .bpf.o for $sources programs in $src" >&2; problems=$((problems + 1)); }
[ "$problems" -eq 0 ] || exit 1
echo "$sources programs and their headers carry GPL-2.0 OR BSD-2-Clause; the kernel reads Dual BSD/GPL"
