#include "traces/aicb/aicb_expand.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "tests/support/status_matchers.h"
#include "traces/aicb/aicb_import.h"
#include "traces/trace_io.h"

namespace collide::traces::aicb {
namespace {

std::string testdata(const std::string& name) {
  return std::string(COLLIDE_AICB_TESTDATA) + "/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Expected {
  v1::OpKind kind;
  std::string comm;
  uint64_t bytes;
  int32_t root;
  int64_t compute;  // -1: none
  std::string label;
};

void expect_ops(const std::vector<v1::Op>& ops, const std::vector<Expected>& want) {
  ASSERT_EQ(ops.size(), want.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    SCOPED_TRACE(want[i].label);
    EXPECT_EQ(ops[i].index(), i);
    EXPECT_EQ(ops[i].kind(), want[i].kind);
    EXPECT_EQ(ops[i].comm(), want[i].comm);
    EXPECT_EQ(ops[i].bytes(), want[i].bytes);
    EXPECT_EQ(ops[i].root(), want[i].root);
    EXPECT_EQ(ops[i].has_compute_before_ns(), want[i].compute >= 0);
    if (want[i].compute >= 0) {
      EXPECT_EQ(ops[i].compute_before_ns(), static_cast<uint64_t>(want[i].compute));
    }
    EXPECT_EQ(ops[i].label(), want[i].label);
  }
}

const v1::Communicator* find_comm(const Expansion& e, const std::string& id) {
  for (const auto& c : e.communicators()) {
    if (c.id() == id) return &c;
  }
  return nullptr;
}

std::vector<uint32_t> ranks_of(const v1::Communicator* c) {
  return c ? std::vector<uint32_t>(c->ranks().begin(), c->ranks().end()) : std::vector<uint32_t>{};
}

// Every member of a communicator must issue the same sequence of collectives on it, or the
// replay would hang: checked for every communicator of the expansion.
void expect_consistent_groups(const Expansion& e) {
  std::map<uint32_t, std::vector<v1::Op>> by_rank;
  for (uint32_t r = 0; r < e.layout().world(); ++r) by_rank[r] = e.rank_ops(r);
  for (const v1::Communicator& c : e.communicators()) {
    if (c.name() == "pp") continue;  // point to point, checked by pairs below
    std::vector<std::pair<v1::OpKind, uint64_t>> first;
    for (int i = 0; i < c.ranks_size(); ++i) {
      std::vector<std::pair<v1::OpKind, uint64_t>> seq;
      for (const v1::Op& op : by_rank[c.ranks(i)]) {
        if (op.comm() == c.id()) seq.emplace_back(op.kind(), op.bytes());
      }
      if (i == 0) {
        first = seq;
        EXPECT_FALSE(seq.empty()) << c.id();
      } else {
        EXPECT_EQ(seq, first) << c.id() << " rank " << c.ranks(i);
      }
    }
  }
  // Sends and receives pair up: the n-th send from a to b matches the n-th receive at b from a.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> sends, recvs;
  for (const auto& [rank, ops] : by_rank) {
    for (const v1::Op& op : ops) {
      if (op.kind() != v1::OP_KIND_SEND && op.kind() != v1::OP_KIND_RECV) continue;
      const v1::Communicator* c = find_comm(e, op.comm());
      ASSERT_NE(c, nullptr);
      const uint32_t peer = c->ranks(op.root());
      if (op.kind() == v1::OP_KIND_SEND)
        sends[{rank, peer}].push_back(op.bytes());
      else
        recvs[{peer, rank}].push_back(op.bytes());
    }
  }
  EXPECT_EQ(sends, recvs);
}

TEST(AicbExpand, Tp2Pp2Dp2TwoLayers) {
  ImportReport report;
  auto w = parse_workload(slurp(testdata("tp2_pp2_dp2.txt")), "w.txt", {}, report);
  ASSERT_TRUE(w.ok());
  auto e = Expansion::create(*w, {}, report);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->layout().world(), 8u);
  EXPECT_EQ(e->layout().dp, 2u);
  // 4 TP groups of 2, 4 DP groups of 2, 4 pipelines of 2 stages.
  EXPECT_EQ(e->communicators().size(), 12u);
  EXPECT_EQ(ranks_of(find_comm(*e, "tp0")), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(ranks_of(find_comm(*e, "tp3")), (std::vector<uint32_t>{6, 7}));
  EXPECT_EQ(ranks_of(find_comm(*e, "dp0")), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(ranks_of(find_comm(*e, "dp3")), (std::vector<uint32_t>{5, 7}));
  EXPECT_EQ(ranks_of(find_comm(*e, "pp0")), (std::vector<uint32_t>{0, 4}));
  EXPECT_EQ(ranks_of(find_comm(*e, "pp3")), (std::vector<uint32_t>{3, 7}));

  using K = v1::OpKind;
  // Stage 0, rank 0. All-gather and reduce-scatter sizes are the whole buffer in the file:
  // 2 MiB over 2 ranks is 1 MiB per rank. The mlp wg compute (3500, no comm) and the attention ig
  // compute (2000) both come before the attention ig all-reduce.
  expect_ops(e->rank_ops(0),
             {
                 {K::OP_KIND_ALL_REDUCE, "tp0", 1048576, -1, 1000, "attention.fwd.tp"},
                 {K::OP_KIND_ALL_GATHER, "tp0", 1048576, -1, 1500, "mlp.fwd.tp"},
                 {K::OP_KIND_SEND, "pp0", 65536, 1, -1, "pp.fwd.send"},
                 {K::OP_KIND_RECV, "pp0", 65536, 1, -1, "pp.bwd.recv"},
                 {K::OP_KIND_REDUCE_SCATTER, "tp0", 1048576, -1, 2500, "mlp.ig.tp"},
                 {K::OP_KIND_ALL_REDUCE, "tp0", 1048576, -1, 5500, "attention.ig.tp"},
                 {K::OP_KIND_ALL_REDUCE, "dp0", 4194304, -1, 3000, "attention.wg.dp"},
             });
  // Stage 1, rank 7 (dp index 1, tp index 1).
  expect_ops(e->rank_ops(7),
             {
                 {K::OP_KIND_RECV, "pp3", 65536, 0, -1, "pp.fwd.recv"},
                 {K::OP_KIND_ALL_REDUCE, "tp3", 1048576, -1, 1000, "attention.fwd.tp"},
                 {K::OP_KIND_ALL_GATHER, "tp3", 1048576, -1, 1500, "mlp.fwd.tp"},
                 {K::OP_KIND_REDUCE_SCATTER, "tp3", 1048576, -1, 2500, "mlp.ig.tp"},
                 {K::OP_KIND_ALL_REDUCE, "tp3", 1048576, -1, 5500, "attention.ig.tp"},
                 {K::OP_KIND_ALL_REDUCE, "dp3", 4194304, -1, 3000, "attention.wg.dp"},
                 {K::OP_KIND_SEND, "pp3", 65536, 0, -1, "pp.bwd.send"},
             });
  uint64_t total_ops = 0, total_bytes = 0;
  for (uint32_t r = 0; r < 8; ++r) {
    for (const v1::Op& op : e->rank_ops(r)) {
      ++total_ops;
      total_bytes += op.bytes();
    }
  }
  EXPECT_EQ(total_ops, 56u);  // 7 per rank
  // Per rank: 4 x 1 MiB TP + 4 MiB DP + 2 x 64 KiB pipeline.
  EXPECT_EQ(total_bytes, 8u * (4u * 1048576 + 4194304 + 2 * 65536));
  expect_consistent_groups(*e);
}

TEST(AicbExpand, ExpertGroups) {
  ImportReport report;
  auto w = parse_workload(slurp(testdata("ep2_dp4.txt")), "w.txt", {}, report);
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto e = Expansion::create(*w, {}, report);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->layout().dp, 4u);
  EXPECT_EQ(ranks_of(find_comm(*e, "ep0")), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(ranks_of(find_comm(*e, "ep1")), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(ranks_of(find_comm(*e, "dpep0")), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(ranks_of(find_comm(*e, "dpep1")), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(e->communicators().size(), 4u);  // tp 1 and dp unused: no groups for them
  using K = v1::OpKind;
  expect_ops(e->rank_ops(3),
             {
                 {K::OP_KIND_ALL_TO_ALL, "ep1", 2048, -1, 10, "moe_route.fwd.ep"},
                 {K::OP_KIND_REDUCE_SCATTER, "dpep1", 8192, -1, 3, "moe_grad.wg.dpep"},
                 {K::OP_KIND_ALL_TO_ALL, "ep1", 2048, -1, 20, "moe_route.ig.ep"},
                 {K::OP_KIND_ALL_GATHER, "dpep1", 4096, -1, 30, "moe_route.wg.dpep"},
             });
  expect_consistent_groups(*e);
}

TEST(AicbExpand, DegreesMustDivide) {
  ImportReport report;
  auto w = parse_workload("P model_parallel_NPU_group: 3 all_gpus: 8\n0\n", "w.txt", {}, report);
  ASSERT_TRUE(w.ok());
  auto e = Expansion::create(*w, {}, report);
  ASSERT_THAT(e, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(e.status().message().find("w.txt:1"), std::string::npos);
  auto w2 = parse_workload("P ep: 3 all_gpus: 4\n0\n", "w.txt", {}, report);
  ASSERT_TRUE(w2.ok());
  EXPECT_THAT(Expansion::create(*w2, {}, report), StatusIs(StatusCode::kInvalidArgument));
}

TEST(AicbImport, WritesTheTrace) {
  const auto out =
      std::filesystem::temp_directory_path() / ("aicb_" + std::to_string(::getpid()) + ".trace");
  auto report = import_aicb({testdata("tp2_pp2_dp2.txt")}, out.string(), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ops, 56u);
  EXPECT_EQ(report->ranks, 8u);
  EXPECT_EQ(report->communicators, 12u);
  auto reader = TraceReader::open(out.string());
  ASSERT_TRUE(reader.ok());
  const auto& h = (*reader)->header();
  EXPECT_EQ(h.source_format(), v1::SOURCE_FORMAT_AICB);
  EXPECT_EQ(h.world_size(), 8u);
  EXPECT_EQ(h.metadata().at("parallelism.dp"), "2");
  EXPECT_EQ(h.metadata().at("aicb.compute_unit"), "ns");
  v1::Op op;
  ASSERT_TRUE(*(*reader)->next(op));
  EXPECT_EQ(op.source(), testdata("tp2_pp2_dp2.txt") + ":3");
  std::filesystem::remove(out);

  ImportOptions strict;
  strict.strict = true;
  auto bad = import_aicb({testdata("bad_columns.txt")}, out.string(), strict);
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad.status().message().find("bad_columns.txt:4"), std::string::npos);
  EXPECT_THAT(import_aicb({"/nonexistent/w.txt"}, out.string(), {}),
              StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(import_aicb({}, out.string(), {}), StatusIs(StatusCode::kInvalidArgument));
  std::filesystem::remove(out);
}

struct Imported {
  ImportReport report;
  v1::TraceHeader header;
  std::vector<v1::Op> ops;
};

Imported import_file(const std::string& name, const ImportOptions& options = {}) {
  Imported got;
  const auto out = std::filesystem::temp_directory_path() /
                   ("aicb_" + name + "_" + std::to_string(::getpid()) + ".trace");
  auto report = import_aicb({testdata(name)}, out.string(), options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  if (!report.ok()) return got;
  got.report = *report;
  auto reader = TraceReader::open(out.string());
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return got;
  got.header = (*reader)->header();
  v1::Op op;
  while (*(*reader)->next(op)) got.ops.push_back(op);
  std::filesystem::remove(out);
  return got;
}

// The shape of SimAI's shipped analytical workload: `pp_comm <bytes>` without a colon, a
// checkpoints list, *_DP_EP weight-gradient collectives and ALLTOALL_EP in the layer columns.
TEST(AicbImport, SimaiAnalyticalWorkloadShape) {
  const Imported got = import_file("simai_analytical_shape.txt");
  EXPECT_EQ(got.report.problems_total, 0u)
      << (got.report.problems.empty() ? "" : got.report.problems[0].what);
  EXPECT_EQ(got.header.world_size(), 16u);
  EXPECT_EQ(got.header.metadata().at("aicb.checkpoints"), "2 1 3");
  std::map<std::string, uint64_t> bytes_by_label;
  std::map<std::string, int> ranks_of_comm;
  for (const v1::Communicator& c : got.header.communicators()) ranks_of_comm[c.id()] = c.ranks_size();
  for (const v1::Op& op : got.ops) {
    if (op.rank() != 0) continue;
    bytes_by_label[op.label()] = op.bytes();
    if (op.label() == "moe_dispatch.fwd.ep") {
      EXPECT_EQ(op.kind(), v1::OP_KIND_ALL_TO_ALL);
      EXPECT_EQ(ranks_of_comm.at(op.comm()), 2);
    }
    if (op.label() == "moe_grad_norm.wg.dpep") {
      EXPECT_EQ(op.kind(), v1::OP_KIND_ALL_GATHER);
      EXPECT_EQ(ranks_of_comm.at(op.comm()), 2);  // dp 4 / ep 2
    }
  }
  // Whole buffers split over the group: all-to-all over ep 2, all-gather over dp_ep 2.
  EXPECT_EQ(bytes_by_label.at("moe_dispatch.fwd.ep"), 4096u);
  EXPECT_EQ(bytes_by_label.at("moe_grad_norm.wg.dpep"), 16384u);
  EXPECT_EQ(bytes_by_label.at("moe_grad_sync.wg.dpep"), 8192u);
  EXPECT_EQ(bytes_by_label.at("grad_gather.wg.dp"), 16384u);  // dp 4
  EXPECT_EQ(bytes_by_label.at("pp.fwd.send"), 4096u);          // rank 0 is stage 0
}

// AICB's micro-test files say neither all_gpus nor any degree: the GPU count must be given, and
// the import says so when it is not.
TEST(AicbImport, MicroTestFileTakesTheWorldSizeGiven) {
  const Imported alone = import_file("micro_all_reduce.txt");
  EXPECT_EQ(alone.report.ops, 0u);
  ASSERT_EQ(alone.report.problems_total, 1u);
  EXPECT_NE(alone.report.problems[0].what.find("--world-size"), std::string::npos)
      << alone.report.problems[0].what;

  ImportOptions eight;
  eight.world_size = 8;
  const Imported got = import_file("micro_all_reduce.txt", eight);
  EXPECT_EQ(got.report.problems_total, 0u);
  ASSERT_EQ(got.report.notes.size(), 1u);
  EXPECT_NE(got.report.notes[0].find("8 GPUs as given"), std::string::npos) << got.report.notes[0];
  EXPECT_EQ(got.header.world_size(), 8u);
  ASSERT_EQ(got.ops.size(), 24u);
  for (const v1::Op& op : got.ops) {
    EXPECT_EQ(op.kind(), v1::OP_KIND_ALL_REDUCE);
    EXPECT_EQ(got.header.communicators(0).ranks_size(), 8);
  }
  std::multiset<uint64_t> sizes;
  for (size_t i = 0; i < 3; ++i) sizes.insert(got.ops[i].bytes());  // rank 0's
  EXPECT_EQ(sizes, (std::multiset<uint64_t>{1024, 2048, 4096}));

  // A file that says all_gpus and a different count given: which one is meant is unknowable.
  const auto out = std::filesystem::temp_directory_path() / "aicb_mismatch.trace";
  ImportOptions sixteen;
  sixteen.world_size = 16;
  auto mismatch = import_aicb({testdata("tp2_pp2_dp2.txt")}, out.string(), sixteen);
  ASSERT_THAT(mismatch, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(mismatch.status().message().find("all_gpus 8"), std::string::npos);
}

}  // namespace
}  // namespace collide::traces::aicb
