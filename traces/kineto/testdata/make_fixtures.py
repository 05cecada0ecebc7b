#!/usr/bin/env python3
"""Writes the profiler (Kineto) test traces: a made-up 2-rank job, one Chrome trace per rank in the
shape torch.profiler exports (distributedInfo, traceEvents). Each collective shows as a CPU-side
record_param_comms event and an NCCL kernel event carrying the same collective args; rank 0 sends
a tensor to rank 1. Run from this folder; the outputs are committed."""
import json


def args(rank, name, seq, n_in, n_out, dtype, peer=None):
    a = {"External id": 100 + seq, "Record function id": 0, "Ev Idx": seq,
         "Collective name": name, "In msg nelems": n_in, "Out msg nelems": n_out,
         "Group size": 2, "dtype": dtype, "In split size": "[]", "Out split size": "[]",
         "Global rank start": 0, "Global rank stride": 1, "Process Group Name": "0",
         "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]", "Seq": seq}
    a["Rank"] = rank if peer is None else peer
    return a


def rank_trace(rank):
    events = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1000 + rank,
               "tid": 1, "ts": 5000.0, "dur": 90000.0, "args": {}}]
    ops = [("allreduce", 1, 1048576, 1048576, "Float", None, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
           ("allreduce", 2, 1048576, 1048576, "Float", None, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
           ("_allgather_base", 3, 4096, 8192, "BFloat16", None, "ncclDevKernel_AllGather_RING_LL"),
           ("_reduce_scatter_base", 4, 8192, 4096, "BFloat16", None, "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL")]
    if rank == 0:
        ops.append(("send", 1, 256, 256, "Float", 1, "ncclDevKernel_SendRecv"))
    else:
        ops.append(("recv", 1, 256, 256, "Float", 0, "ncclDevKernel_SendRecv"))
    t = 10000.0 + rank
    for name, seq, n_in, n_out, dtype, peer, kernel in ops:
        a = args(rank, name, seq, n_in, n_out, dtype, peer)
        events.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1000 + rank,
                       "tid": 1, "ts": t, "dur": 12.5, "args": a})
        events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7,
                       "ts": t + 40.0, "dur": 850.25 + seq, "args": dict(a, device=rank, stream=7)})
        t += 2000.0
    return {"schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "deviceProperties": [], "traceEvents": events}


for r in range(2):
    with open(f"rank{r}.pt.trace.json", "w") as f:
        json.dump(rank_trace(r), f)
