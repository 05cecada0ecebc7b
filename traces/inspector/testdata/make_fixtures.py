#!/usr/bin/env python3
"""Writes the NCCL Inspector test output: a made-up 4-rank job on two hosts, in the plugin's shape
(one file per process, <host>-pid<pid>.log, one JSON object a line). The world communicator 0x1f00
and two 2-rank communicators (0x2a01: world ranks 0,1; 0x2a02: world ranks 2,3); three sampled
all-reduces and all-gathers per process. Run from this folder; the outputs are committed."""
import json

procs = [("node-a", 4101, 0), ("node-a", 4102, 1), ("node-b", 5201, 2), ("node-b", 5202, 3)]


def record(comm, rank, n, nnodes, host, pid, ts, coll, sn, size, us):
    return {"header": {"id": comm, "rank": rank, "n_ranks": n, "nnodes": nnodes},
            "metadata": {"inspector_output_format_version": "v4.0", "git_rev": "",
                         "rec_mechanism": "nccl_profiler_interface", "dump_timestamp_us": ts,
                         "hostname": host, "pid": pid},
            "coll_perf": {"coll": coll, "coll_sn": sn, "coll_msg_size_bytes": size,
                          "coll_exec_time_us": us, "coll_timing_source": "kernel_gpu",
                          "coll_algobw_gbs": round(size / us / 1e3, 3), "coll_busbw_gbs": 0.0}}


for host, pid, rank in procs:
    tp = "0x2a01" if rank < 2 else "0x2a02"
    lines = []
    for i, sn in enumerate([17, 42, 97]):
        t = 1764000000000000 + i * 500 + rank
        lines.append(record("0x1f00", rank, 4, 2, host, pid, t, "AllReduce", sn, 268435456, 2100 + 10 * rank + i))
        lines.append(record(tp, rank % 2, 2, 1, host, pid, t + 1, "AllGather", 5 + i, 1048576, 31))
    with open(f"{host}-pid{pid}.log", "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
