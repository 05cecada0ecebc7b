#!/usr/bin/env bash
# ci/bench.sh <area>: builds and runs the benchmarks of one area. Every benchmark prints ratios
# against a peer measured in the same run; the output ends with one line per figure:
#   figure <name> <value> <unit>
# Areas: wire (framing), replayer (transport and data plane), traces (NCCL log import vs wc -l),
#        collectives (expanding a synthesized 16,384-rank job vs reading it)
set -euo pipefail
cd "$(dirname "$0")/.."
area=${1:-}
build=${COLLIDE_BENCH_BUILD:-build/bench}

usage() { echo "usage: ci/bench.sh <area>   (areas: wire, replayer, traces, collectives)" >&2; exit 2; }
[ -n "$area" ] || usage

ci/install-deps.sh >/dev/null
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT

case "$area" in
  wire)
    cmake --build "$build" -j"$(nproc)" --target replayer_wire_bench
    "$build/replayer/replayer_wire_bench" --benchmark_min_time=0.5 | tee "$log"
    ;;
  replayer)
    cmake --build "$build" -j"$(nproc)" --target replayer_goodput_vs_loss_bench \
      replayer_tx_rate_bench replayer_veth_bench collide
    "$build/replayer/replayer_goodput_vs_loss_bench" | tee "$log"
    # The in-memory curve's own ratio at 1% and 5% loss (table rows "1%" and "5%").
    # (The chart below the table starts its lines with the loss too: numbers only.)
    awk '$1=="1%" && $2 ~ /^[0-9.]+$/ && $2>0 {printf "figure inmem_goodput_sr_vs_gbn_at_1pct %.3f x\n", $3/$2}
         $1=="5%" && $2 ~ /^[0-9.]+$/ && $2>0 {printf "figure inmem_goodput_sr_vs_gbn_at_5pct %.3f x\n", $3/$2}' \
      "$log" | tee -a "$log"
    # Three alternating rounds of 3 s per side and frame size, testpmd starting up in each: ~1 min.
    timeout -k 10 240 "$build/replayer/replayer_tx_rate_bench" 3 | tee -a "$log"
    # Two engines, each the other's peer, moving an all-reduce over a memif pair in one process,
    # against testpmd's io forwarding over a memif pair; 5 alternating rounds of 2 s (each side's
    # best: a shared machine's load halves either side's rate for seconds at a time): ~45 s.
    timeout -k 10 120 "$build/replayer/replayer_tx_rate_bench" 2 --rounds 5 --duplex | tee -a "$log"
    # Two senders on two net_null ports and cores (engines per NIC) against one: ~20 s.
    timeout -k 10 120 "$build/replayer/replayer_tx_rate_bench" 3 --rounds 3 --payload 1024 \
      --engines-scaling | tee -a "$log"
    # Two senders on two queues of one net_null port (engines per queue) against one: ~20 s.
    timeout -k 10 120 "$build/replayer/replayer_tx_rate_bench" 3 --rounds 3 --payload 1024 \
      --queues-scaling | tee -a "$log"
    # Namespaces, veths, DPDK, iperf3 and BPF: root. Each run inside is time-bounded; this bounds
    # the whole, and removes the bench's namespaces should it be killed.
    trap 'rm -f "$log"; ip netns list 2>/dev/null | awk "/^cl-rvb-/{print \$1}" |
          xargs -r -n1 ip netns del' EXIT
    timeout -k 10 1500 "$build/tests/bench/replayer_veth_bench" ${COLLIDE_BENCH_QUICK:+--quick} \
      --png "$build/replayer_goodput_vs_loss.png" | tee -a "$log"
    ;;
  traces)
    # A generated NCCL log of >= 1 GB (256 ranks, init/GRAPH lines, mostly COLL lines, noise):
    # `wc -l` and `collide trace import` read it from the page cache in the same run.
    cmake --build "$build" -j"$(nproc)" --target collide collide_nccl_log_gen
    data=${COLLIDE_BENCH_DATA:-$build/bench-data}
    mkdir -p "$data"
    nccl_log="$data/nccl-1g.log"
    [ -s "$nccl_log" ] || "$build/traces/nccl/collide_nccl_log_gen" --output "$nccl_log" \
        --bytes 1100000000 --ranks 256 --tp 8
    cat "$nccl_log" >/dev/null
    import_cmd=("$build/orchestrator/cli/collide" trace import --format nccl -q "$nccl_log"
                -o "$data/nccl-1g.trace")
    seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
    median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
    # Rounds of `wc -l` then the import, back to back: the speed of a shared machine drifts by
    # tens of percent over minutes, so each round's ratio compares runs of the same moment, and
    # the median of the rounds is the figure.
    ratios=(); wc_times=(); import_times=()
    for round in 1 2 3 4 5; do
      wc_s=$(seconds wc -l "$nccl_log")
      import_s=$(seconds "${import_cmd[@]}")
      wc_times+=("$wc_s"); import_times+=("$import_s")
      ratios+=("$(echo "$wc_s / $import_s" | bc -l)")
    done
    rss_file=$(mktemp)
    /usr/bin/time -o "$rss_file" -f %M "${import_cmd[@]}" >/dev/null
    # CPU time (user + sys) of each, for a machine shared with other work, where wall time is noisy.
    cpu_seconds() { /usr/bin/time -f '%U %S' -o "$rss_file.cpu" "$@" >/dev/null;
                    awk '{print $1 + $2}' "$rss_file.cpu"; }
    wc_cpu=$(median "$(cpu_seconds wc -l "$nccl_log")" "$(cpu_seconds wc -l "$nccl_log")" \
                    "$(cpu_seconds wc -l "$nccl_log")")
    import_cpu=$(median "$(cpu_seconds "${import_cmd[@]}")" "$(cpu_seconds "${import_cmd[@]}")" \
                        "$(cpu_seconds "${import_cmd[@]}")")
    rm -f "$rss_file.cpu"
    bytes=$(stat -c %s "$nccl_log")
    lines=$(wc -l <"$nccl_log")
    import_median=$(median "${import_times[@]}")
    {
      echo "log: $nccl_log, $bytes bytes, $lines lines"
      "$build/orchestrator/cli/collide" trace import --format nccl -q --max-problems 0 "$nccl_log" \
          -o "$data/nccl-1g.trace"
      echo "wc -l, s: ${wc_times[*]}"
      echo "import, s: ${import_times[*]}"
      echo "ratio per round: $(printf '%.3f ' "${ratios[@]}")"
      echo "cpu (user+sys, median of 3): wc -l $wc_cpu s; import $import_cpu s"
      echo "figure import_vs_wc_l $(median "${ratios[@]}" | xargs printf '%.3f') x"
      echo "figure import_vs_wc_l_cpu $(echo "$wc_cpu / $import_cpu" | bc -l | xargs printf '%.3f') x"
      echo "figure nccl_import_throughput $(echo "$bytes / $import_median / 1000000" | bc -l | xargs printf '%.0f') MB/s"
      echo "figure nccl_import_peak_rss $(( $(cat "$rss_file") / 1024 )) MiB"
    } | tee "$log"
    rm -f "$rss_file" "$data/nccl-1g.trace"
    ;;
  collectives)
    # Synthesizes one iteration of Llama 3 405B on 16,384 ranks, then expands one host's ranks and
    # (every 64th host of, extrapolated to) the whole job; COLLIDE_BENCH_SAMPLE_EVERY=1 expands
    # every rank (over an hour on 2 cores).
    cmake --build "$build" -j"$(nproc)" --target replayer_expand_bench
    "$build/replayer/replayer_expand_bench" --sample-every "${COLLIDE_BENCH_SAMPLE_EVERY:-64}" \
      | tee "$log"
    ;;
  *) usage ;;
esac

echo "---"
grep '^figure ' "$log"
