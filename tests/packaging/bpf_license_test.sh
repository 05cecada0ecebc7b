#!/usr/bin/env bash
# The eBPF programs are dual-licensed, GPL-2.0 OR BSD-2-Clause (the rest of collide is
# Apache-2.0): every program's source and the headers of its folder it includes say so on their
# first line, and every compiled program tells the kernel "Dual BSD/GPL", which it counts as
# GPL-compatible (GPL-only helpers stay usable).
#   bpf_license_test.sh <source folder> <folder of its built .bpf.o files> [<source> <objects>]...
set -euo pipefail
[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] || { echo "usage: $0 <source folder> <object folder>..." >&2; exit 2; }
spdx='// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause'
problems=0
programs=0
problem() { echo "$1" >&2; problems=$((problems + 1)); }
while [ $# -gt 0 ]; do
  src=$1 objects=$2
  shift 2
  for f in "$src"/*.bpf.c; do
    [ -f "$f" ] || { problem "$src: no .bpf.c program"; continue; }
    programs=$((programs + 1))
    checked=("$f")
    for header in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
      [ -f "$src/$header" ] && checked+=("$src/$header")
    done
    for s in "${checked[@]}"; do
      [ "$(head -n1 "$s")" = "$spdx" ] || problem "$s: first line is not '$spdx'"
    done
    o="$objects/$(basename "$f" .c).o"
    if [ ! -f "$o" ]; then
      problem "$f: no $o"
      continue
    fi
    license=$(readelf -p license "$o" | sed -n 's/^ *\[ *0\] *//p')
    [ "$license" = "Dual BSD/GPL" ] || problem "$o: license section is '$license', not 'Dual BSD/GPL'"
  done
done
[ "$problems" -eq 0 ] || exit 1
echo "$programs programs and their headers carry GPL-2.0 OR BSD-2-Clause; the kernel reads Dual BSD/GPL"
