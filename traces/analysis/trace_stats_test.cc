#include "traces/analysis/trace_stats.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/status_matchers.h"
#include "traces/analysis/stats_report.h"
#include "traces/analysis/test_traces.h"

namespace collide::traces::analysis {
namespace {

using testing::CommSpec;
using testing::make_header;
using testing::make_op;

std::vector<uint32_t> iota(uint32_t n, uint32_t first = 0) {
  std::vector<uint32_t> v;
  for (uint32_t r = first; r < first + n; ++r) v.push_back(r);
  return v;
}

TraceStats stats_of(const v1::TraceHeader& header, const std::vector<v1::Op>& ops) {
  StatsAccumulator acc(header);
  for (const v1::Op& op : ops) acc.add(op);
  return std::move(acc).finish();
}

// FACTS section 7's worked example: Llama3-70B (P = 70e9) data parallel on 8 GPUs, one
// all-reduce of the 2P-byte bf16 gradient buffer per rank and mini-batch.
constexpr uint64_t kLlamaParams = 70'000'000'000;
constexpr uint64_t kGradientBytes = 2 * kLlamaParams;  // 140e9

std::vector<v1::Op> llama_dp_ops(uint32_t iterations) {
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < 8; ++r) {  // rank by rank, as importers write
    for (uint32_t i = 0; i < iterations; ++i) {
      v1::Op op = make_op(r, i, v1::OP_KIND_ALL_REDUCE, "dp", kGradientBytes);
      op.set_iteration(i);
      ops.push_back(op);
    }
  }
  return ops;
}

TEST(TraceStats, LlamaDataParallelWorkedExample) {
  const auto header = make_header(8, {{"dp", iota(8)}});
  const TraceStats s = stats_of(header, llama_dp_ops(1));
  // 2 P G (G-1) = 7,840 GB under the full-mesh model; a ring sends 4 P (G-1) = 1,960 GB.
  EXPECT_EQ(s.job.full_mesh_bytes, 2 * kLlamaParams * 8 * 7);
  EXPECT_EQ(s.job.full_mesh_bytes, 7'840'000'000'000u);
  EXPECT_EQ(s.job.nccl_bytes, 4 * kLlamaParams * 7);
  EXPECT_EQ(s.job.nccl_bytes, 1'960'000'000'000u);
  EXPECT_EQ(s.job.issued_ops, 8u);
  EXPECT_EQ(s.job.instances, 1u);  // one collective of the communicator, issued by 8 ranks
  EXPECT_EQ(s.job.issued_bytes, 8 * kGradientBytes);
  ASSERT_EQ(s.by_communicator.size(), 1u);
  EXPECT_EQ(s.by_communicator[0].totals.full_mesh_bytes, 7'840'000'000'000u);
  EXPECT_EQ(s.by_kind.at(v1::OP_KIND_ALL_REDUCE).nccl_bytes, 1'960'000'000'000u);

  const std::string table = stats_table(s, {});
  EXPECT_NE(table.find("7840.000"), std::string::npos) << table;
  EXPECT_NE(table.find("1960.000"), std::string::npos) << table;
  EXPECT_NE(table.find("full-mesh GB"), std::string::npos);
  const nlohmann::json j = stats_json(s, {});
  EXPECT_EQ(j["job"]["full_mesh_bytes"].get<uint64_t>(), 7'840'000'000'000u);
  EXPECT_EQ(j["job"]["nccl_bytes"].get<uint64_t>(), 1'960'000'000'000u);
}

TEST(TraceStats, LlamaDataParallelPerEpoch) {
  // Three traced mini-batches projected to the C4 epoch of N = 178,000: 2 N P G (G-1).
  const auto header = make_header(8, {{"dp", iota(8)}});
  const TraceStats s = stats_of(header, llama_dp_ops(3));
  EXPECT_EQ(s.by_iteration.size(), 3u);
  for (const auto& [iteration, totals] : s.by_iteration) {
    EXPECT_EQ(totals.full_mesh_bytes, 7'840'000'000'000u) << "iteration " << iteration;
    EXPECT_EQ(totals.instances, 1u);
  }
  const EpochTotals e = project_to_epoch(s, 178'000);
  EXPECT_DOUBLE_EQ(e.full_mesh_bytes, 7'840e9 * 178'000);
  EXPECT_DOUBLE_EQ(e.nccl_bytes, 1'960e9 * 178'000);
  StatsReportOptions options;
  options.minibatches_per_epoch = 178'000;
  EXPECT_NE(stats_table(s, options).find("full-mesh 1395520000.000 GB"), std::string::npos)
      << stats_table(s, options);
}

TEST(TraceStats, InterleavedAndRankByRankLayoutsAgree) {
  const auto header = make_header(8, {{"dp", iota(8)}});
  std::vector<v1::Op> by_rank = llama_dp_ops(4);
  std::vector<v1::Op> interleaved;
  for (uint32_t i = 0; i < 4; ++i) {
    for (uint32_t r = 0; r < 8; ++r) interleaved.push_back(by_rank[r * 4 + i]);
  }
  const TraceStats a = stats_of(header, by_rank);
  const TraceStats b = stats_of(header, interleaved);
  EXPECT_EQ(a.job.instances, 4u);
  EXPECT_EQ(b.job.instances, 4u);
  EXPECT_EQ(a.job.full_mesh_bytes, b.job.full_mesh_bytes);
  EXPECT_EQ(a.job.nccl_bytes, b.job.nccl_bytes);
}

TEST(TraceStats, FsdpPerEpochIsFourNPTimesGMinusOne) {
  // FSDP on G GPUs: per mini-batch an all-gather of the parameters and a reduce-scatter of the
  // gradients, each rank's chunk 2P/G bytes. Per epoch of N mini-batches: 4 N P (G-1).
  constexpr uint32_t kG = 4;
  constexpr uint64_t kP = 3'000'000;
  constexpr uint32_t kN = 5;
  const auto header = make_header(kG, {{"fsdp", iota(kG)}});
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < kG; ++r) {
    uint64_t index = 0;
    for (uint32_t mb = 0; mb < kN; ++mb) {
      for (v1::OpKind kind : {v1::OP_KIND_ALL_GATHER, v1::OP_KIND_REDUCE_SCATTER}) {
        v1::Op op = make_op(r, index++, kind, "fsdp", 2 * kP / kG);
        op.set_iteration(mb);
        ops.push_back(op);
      }
    }
  }
  const TraceStats s = stats_of(header, ops);
  EXPECT_EQ(s.job.full_mesh_bytes, 4 * kN * kP * (kG - 1));
  EXPECT_EQ(s.job.nccl_bytes, 4 * kN * kP * (kG - 1));  // ring all-gather / reduce-scatter: same
  EXPECT_EQ(s.job.instances, 2u * kN);
  // One traced mini-batch projected to the epoch gives the same figure.
  std::vector<v1::Op> first;
  for (const v1::Op& op : ops) {
    if (op.iteration() == 0) first.push_back(op);
  }
  EXPECT_DOUBLE_EQ(project_to_epoch(stats_of(header, first), kN).full_mesh_bytes,
                   4.0 * kN * kP * (kG - 1));
}

TEST(TraceStats, PipelineParallelPerEpochIsFourTHTimesGMinusOne) {
  // G pipeline stages; each mini-batch of t tokens sends its bf16 activations (2 t H bytes)
  // forward across each of the G-1 stage boundaries and the gradients back: 4 T H (G-1) per
  // epoch of T = N t tokens.
  constexpr uint32_t kG = 4;
  constexpr uint64_t kH = 8192;
  constexpr uint64_t kTokens = 4096;  // per mini-batch
  constexpr uint32_t kN = 3;
  const auto header = make_header(kG, {{"pp", iota(kG)}});
  std::vector<v1::Op> ops;
  std::vector<uint64_t> next(kG, 0);
  const uint64_t activation = 2 * kTokens * kH;
  for (uint32_t mb = 0; mb < kN; ++mb) {
    for (uint32_t s = 0; s + 1 < kG; ++s) {  // forward
      ops.push_back(make_op(s, next[s]++, v1::OP_KIND_SEND, "pp", activation, s + 1));
      ops.push_back(make_op(s + 1, next[s + 1]++, v1::OP_KIND_RECV, "pp", activation, s));
    }
    for (uint32_t s = kG - 1; s > 0; --s) {  // backward
      ops.push_back(make_op(s, next[s]++, v1::OP_KIND_SEND, "pp", activation, s - 1));
      ops.push_back(make_op(s - 1, next[s - 1]++, v1::OP_KIND_RECV, "pp", activation, s));
    }
  }
  const TraceStats s = stats_of(header, ops);
  EXPECT_EQ(s.job.full_mesh_bytes, 4 * (kN * kTokens) * kH * (kG - 1));
  EXPECT_EQ(s.job.nccl_bytes, s.job.full_mesh_bytes);
  EXPECT_EQ(s.by_kind.at(v1::OP_KIND_SEND).instances, 2u * kN * (kG - 1));
  EXPECT_EQ(s.by_kind.at(v1::OP_KIND_RECV).full_mesh_bytes, 0u);
}

TEST(TraceStats, TensorParallelActivationsAreFourTLHGTimesGMinusOne) {
  // Tensor parallel on G GPUs: each of L layers all-reduces its bf16 activations (2 t H bytes per
  // mini-batch of t tokens) forward and its activation gradients backward: 4 T L H G (G-1) per
  // epoch under the full-mesh model (the articles' activation term), 2/G of it under a ring.
  constexpr uint32_t kG = 4;
  constexpr uint32_t kL = 3;
  constexpr uint64_t kH = 1024;
  constexpr uint64_t kTokens = 512;
  constexpr uint32_t kN = 2;
  const auto header = make_header(kG, {{"tp", iota(kG)}});
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < kG; ++r) {
    uint64_t index = 0;
    for (uint32_t mb = 0; mb < kN; ++mb) {
      for (uint32_t pass = 0; pass < 2; ++pass) {
        for (uint32_t l = 0; l < kL; ++l) {
          v1::Op op = make_op(r, index++, v1::OP_KIND_ALL_REDUCE, "tp", 2 * kTokens * kH);
          op.set_iteration(mb);
          ops.push_back(op);
        }
      }
    }
  }
  const TraceStats s = stats_of(header, ops);
  const uint64_t full = 4 * (kN * kTokens) * kL * kH * kG * (kG - 1);
  EXPECT_EQ(s.job.full_mesh_bytes, full);
  EXPECT_EQ(s.job.nccl_bytes * kG, full * 2);
}

TEST(TraceStats, PerCommunicatorAndKindRowsSumToTheJob) {
  const auto header = make_header(4, {{"world", iota(4)}, {"a", {0, 1}}, {"b", {2, 3}}});
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < 4; ++r) {
    ops.push_back(make_op(r, 0, v1::OP_KIND_ALL_GATHER, "world", 100));
    ops.push_back(make_op(r, 1, v1::OP_KIND_BROADCAST, r < 2 ? "a" : "b", 1000, 0));
  }
  const TraceStats s = stats_of(header, ops);
  ASSERT_EQ(s.by_communicator.size(), 3u);
  EXPECT_EQ(s.by_communicator[0].totals.full_mesh_bytes, 4u * 3 * 100);
  EXPECT_EQ(s.by_communicator[1].totals.full_mesh_bytes, 1000u);
  EXPECT_EQ(s.by_communicator[2].totals.instances, 1u);
  EXPECT_EQ(s.job.full_mesh_bytes, 1200u + 2000u);
  EXPECT_EQ(s.by_kind.at(v1::OP_KIND_BROADCAST).instances, 2u);
  EXPECT_EQ(s.ops_unaccounted, 0u);
  StatsReportOptions options;
  options.max_communicator_rows = 1;
  const std::string table = stats_table(s, options);
  EXPECT_NE(table.find("... 2 more communicators"), std::string::npos) << table;
  EXPECT_EQ(stats_json(s, options)["by_communicator"].size(), 3u);
}

TEST(TraceStats, AllToAllvAddsEachRanksOwnSizes) {
  const auto header = make_header(3, {{"ep", iota(3)}});
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < 3; ++r) {
    v1::Op op = make_op(r, 0, v1::OP_KIND_ALL_TO_ALLV, "ep", 0);
    for (uint32_t p = 0; p < 3; ++p) op.add_peer_bytes((r + 1) * 10 + p);
    ops.push_back(op);
  }
  const TraceStats s = stats_of(header, ops);
  // rank 0 sends 11+12, rank 1 20+22, rank 2 30+31.
  EXPECT_EQ(s.job.full_mesh_bytes, 23u + 42u + 61u);
  EXPECT_EQ(s.job.instances, 1u);
}

TEST(TraceStats, UndeclaredCommunicatorIsCountedNotGuessed) {
  const auto header = make_header(2, {});
  const TraceStats s = stats_of(header, {make_op(0, 0, v1::OP_KIND_ALL_REDUCE, "nope", 8)});
  EXPECT_EQ(s.ops_unaccounted, 1u);
  EXPECT_EQ(s.job.issued_ops, 1u);
  EXPECT_EQ(s.job.full_mesh_bytes, 0u);
  EXPECT_NE(stats_table(s, {}).find("warning"), std::string::npos);
}

TEST(TraceStats, FromFileAndUnreadableFile) {
  const std::string path = testing::temp_trace_path("stats");
  ASSERT_TRUE(testing::write_trace(path, make_header(8, {{"dp", iota(8)}}), llama_dp_ops(2)).ok());
  auto s = compute_trace_stats(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->job.full_mesh_bytes, 2 * 7'840'000'000'000u);
  std::filesystem::remove(path);
  auto missing = compute_trace_stats(path);
  ASSERT_THAT(missing, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace collide::traces::analysis
