#!/usr/bin/env python3
"""Writes the Flight Recorder test dumps and the pickle decoder's fuzz corpus.

The dumps are made up, in the shape PyTorch's c10d Flight Recorder writes (dump version 2.4):
8 ranks, the world group "0" and two groups of 4 ("1": ranks 0-3, "2": ranks 4-7). Every rank
ran world all-reduces 1..11 and group all-gathers, rank 0 sent one tensor to rank 1. Then the
job hung on world collective 12: rank 5 never issued it, rank 3 enqueued it without its kernel
starting, the other six started it. Rank 0's ring buffer had already dropped collectives 1-2.

  fr_pickle/nccl_trace_rank_<r>   pickle protocol 2, as torch's pickler writes
  fr_json/nccl_trace_rank_<r>.json  the JSON dump of the same state
  sample_proto5.pkl / sample.json  a nested value with shared parts, pickle protocol 5 and JSON
  ../fuzz_corpus/*               valid and hostile pickles for the decoder's fuzz harness; it
                                 replays this folder too, so none of the above is copied there

Run from this folder: python3 make_fixtures.py (the outputs are committed; tests never run it).
"""
import json
import os
import pickle

WORLD = 8
GROUPS = {"0": ("default_pg", list(range(8))), "1": ("tp", [0, 1, 2, 3]), "2": ("tp", [4, 5, 6, 7])}
T0 = 1_764_000_000_000_000_000


def entry(rank, record_id, pg, seq, p2p_seq, name, in_sizes, out_sizes, dtype, state, t, dur, p2p=False):
    return {
        "record_id": record_id,
        "pg_id": int(pg),
        "process_group": (pg, GROUPS[pg][0]),
        "collective_seq_id": seq,
        "p2p_seq_id": p2p_seq,
        "op_id": record_id + 1,
        "profiling_name": name,
        "time_created_ns": t,
        "duration_ms": dur,
        "input_sizes": in_sizes,
        "input_dtypes": [dtype] * len(in_sizes),
        "output_sizes": out_sizes,
        "output_dtypes": [dtype] * len(out_sizes),
        "state": state,
        "time_discovered_started_ns": None if state == "scheduled" else t + 1000,
        "time_discovered_completed_ns": t + 2000 if state == "completed" else None,
        "retired": state == "completed",
        "timeout_ms": 600000,
        "is_p2p": p2p,
        "frames": [{"name": "all_reduce", "filename": "train.py", "line": 42}],
    }


def rank_entries(rank):
    tp = "1" if rank < 4 else "2"
    out = []
    rid = 0
    tp_seq = 0
    for seq in range(1, 12):
        t = T0 + seq * 10_000_000 + rank
        out.append(entry(rank, rid, "0", seq, 0, "nccl:all_reduce", [[1024, 1024]], [[1024, 1024]],
                         "Float", "completed", t, 1.25 + 0.01 * rank))
        rid += 1
        if seq % 4 == 0:
            tp_seq += 1
            out.append(entry(rank, rid, tp, tp_seq, 0, "nccl:_allgather_base", [[2048]], [[8192]],
                             "BFloat16", "completed", t + 5000, 0.5))
            rid += 1
    if rank in (0, 1):
        name = "nccl:send 0->1" if rank == 0 else "nccl:recv 1<-0"
        out.append(entry(rank, rid, "0", 11, 1, name, [[256]], [[256]], "Float", "completed",
                         T0 + 115_000_000, 0.1, p2p=True))
        rid += 1
    if rank != 5:
        state = "scheduled" if rank == 3 else "started"
        out.append(entry(rank, rid, "0", 12, 0, "nccl:all_reduce", [[1024, 1024]], [[1024, 1024]],
                         "Float", state, T0 + 120_000_000 + rank, None))
    if rank == 0:  # the ring buffer kept only the last entries
        out = [e for e in out if e["is_p2p"] or e["process_group"][0] != "0" or e["collective_seq_id"] >= 3]
    for e in out:
        if e["duration_ms"] is None:
            del e["duration_ms"]
    return out


def pg_config():
    return {name: {"name": name, "desc": desc, "ranks": "[" + ", ".join(map(str, ranks)) + "]"}
            for name, (desc, ranks) in GROUPS.items()}


def dump(rank):
    return {"version": "2.4", "pg_config": pg_config(),
            "pg_status": {"0": {"last_enqueued_collective": 12, "last_started_collective": 12,
                                "last_completed_collective": 11}},
            "entries": rank_entries(rank)}


def as_json(value):
    if isinstance(value, tuple):
        return [as_json(v) for v in value]
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def json_dump(rank):
    d = as_json(dump(rank))
    for e in d["entries"]:  # the JSON dump writes 0 where the pickle has None
        for key in ("time_discovered_started_ns", "time_discovered_completed_ns"):
            if e[key] is None:
                e[key] = 0
    return d


class Call:  # pickles as GLOBAL/STACK_GLOBAL + REDUCE; never unpickled here
    def __reduce__(self):
        return (print, ("a pickle that calls a function",))


def main():
    os.makedirs("fr_pickle", exist_ok=True)
    os.makedirs("fr_json", exist_ok=True)
    for r in range(WORLD):
        with open(f"fr_pickle/nccl_trace_rank_{r}", "wb") as f:
            f.write(pickle.dumps(dump(r), protocol=2))
        with open(f"fr_json/nccl_trace_rank_{r}.json", "w") as f:
            json.dump(json_dump(r), f)

    shared = [1, "two", 3.5]
    sample = {"shared": shared, "again": shared, "tuple": (1, (2, 3)), "none": None, "yes": True,
              "no": False, "big": 2**64 - 1, "negative": -2**63, "small": -5, "wide": 70000,
              "text": "é" * 300, "float": -0.125, "nested": {"k": [[], {}, ()]}}
    with open("sample_proto5.pkl", "wb") as f:
        f.write(pickle.dumps(sample, protocol=5))
    with open("sample_proto2.pkl", "wb") as f:
        f.write(pickle.dumps(sample, protocol=2))
    with open("sample.json", "w") as f:
        json.dump(as_json(sample), f, ensure_ascii=False)

    corpus = "../fuzz_corpus"
    os.makedirs(corpus, exist_ok=True)
    valid = pickle.dumps(dump(0), protocol=2)  # fr_pickle/nccl_trace_rank_0, seeding the fuzzer
    cyclic = []
    cyclic.append(cyclic)
    laughs = b"\x80\x02K\x01"  # 1, then 40 times: memo it, make a list of it twice
    for i in range(40):
        laughs += b"q" + bytes([i % 256]) + b"(h" + bytes([i % 256]) + b"h" + bytes([i % 256]) + b"l"
    laughs += b"."
    files = {
        "valid_proto5.pkl": pickle.dumps(dump(5), protocol=5),
        "sample_proto4.pkl": pickle.dumps(sample, protocol=4),
        "global_reduce.pkl": pickle.dumps(Call(), protocol=2),
        "stack_global_reduce.pkl": pickle.dumps(Call(), protocol=4),
        "truncated.pkl": valid[: len(valid) // 2],
        "huge_unicode_length.pkl": b"\x80\x02X\xff\xff\xff\x7fabc.",
        "huge_frame_length.pkl": b"\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7f.",
        "huge_memo_index.pkl": b"\x80\x02]r\xff\xff\xff\xffj\xff\xff\xff\xff.",
        "deep_nesting.pkl": b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".",
        "deep_marks.pkl": b"\x80\x02" + b"(" * 10000 + b".",
        "cyclic_list.pkl": pickle.dumps(cyclic, protocol=2),
        "billion_laughs.pkl": laughs,
        "wide_long.pkl": b"\x80\x02\x8a\x14" + b"\x01" * 20 + b".",
        "missing_memo.pkl": b"\x80\x02h\x07.",
        "stack_underflow.pkl": b"\x80\x02s.",
        "protocol0.pkl": b"I42\n.",
        "protocol9.pkl": b"\x80\x09N.",
        "empty.pkl": b"",
    }
    for name, data in files.items():
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
