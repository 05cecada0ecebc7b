#pragma once

#include <cstdint>

// The largest sizes and counts collide accepts from a trace or a scenario, in one place, each with
// the reason for it. Input beyond them is refused where it is read (traces/trace_limits.h for
// traces, the scenario's checks for scenarios), before anything is built: past these, a command
// would run out of memory or run for longer than anyone waits, and fail far from the cause.
namespace collide::limits {

// Ranks of a job. The largest training jobs run on about 100k GPUs. `plan`, `trace validate` and
// the replay keep a few tables of one entry per rank (about 100 bytes a rank in all, estimated
// from the tables' types, not measured): about 100 MB at 2^20 ranks, where a header's 4e9 made
// `plan` grow for minutes until the kernel killed it, and `trace validate` abort on bad_alloc.
inline constexpr uint32_t kMaxWorldSize = 1u << 20;

// Bytes of one op (and of one all-to-allv peer's share). 1 TiB is a 500B-parameter model's
// gradients in bf16 in one unbucketed all-reduce; real ops are smaller (traces of such models are
// analysed with `trace stats`). The replay cuts an op into slices (512 KiB by default) and holds a
// step per slice and ring hop, so its memory grows with the op: measured with `collide plan`, a
// 1 TiB all-reduce of 2 ranks took 16.6 s and 540 MB, while 2^50 bytes made a replay grow by
// hundreds of MB a second until the machine ran out. Shrink big ops with workload.bytes_scale.
inline constexpr uint64_t kMaxOpBytes = uint64_t{1} << 40;

// Ops one run replays (all ranks together). `collide run` keeps a completion record (about 100
// bytes) of every op of every run in memory until it writes the report, and ships the trace to
// every agent on every run.
inline constexpr uint64_t kMaxOpsPerRun = uint64_t{1} << 22;

// Completion records a whole scenario keeps: ops per run x runs (repetitions x (baseline +
// variants)). 2^24 records are about 2 GB, a tenth of a testbed machine's 24 GiB, which leaves the
// rest to the replays.
inline constexpr uint64_t kMaxOpRecords = uint64_t{1} << 24;

// Repetitions of a scenario's runs. Even an empty run takes a second (agents prepare, clocks are
// measured), so 10000 is most of a day; a longer soak is several scenarios, each with its report.
inline constexpr uint32_t kMaxRepetitions = 10'000;

// Points of a scenario's sweep (the product of its swept lists). Each point is a whole scenario
// run: its testbed built, its baseline and variants run for every repetition (a tiny one takes
// about 10 s here); 64 points is a night's work at that size, and a product of lists typed too
// long (10 x 10 x 10) is a slip to catch before anything runs.
inline constexpr uint32_t kMaxSweepPoints = 64;

// Training iterations of a generated workload (synth, collectives, incast). The generated trace
// grows with them; other limits above bound what a run holds, this one a typing slip (4e9).
inline constexpr uint32_t kMaxIterations = 100'000;

// Ranks on one host. A host of 8 GPUs runs 8 ranks; each rank of a host is expanded and replayed
// by that host's replay process on its few cores, so more than 64 would not replay in any time.
inline constexpr uint32_t kMaxRanksPerHost = 64;

// A scenario's trace file. `collide run` reads it whole into memory and sends it, as one protobuf
// message (which cannot exceed 2 GiB), to every agent on every run.
inline constexpr uint64_t kMaxRunTraceBytes = uint64_t{1} << 30;

}  // namespace collide::limits
