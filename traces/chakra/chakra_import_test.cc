#include "traces/chakra/chakra_import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"
#include "traces/analysis/trace_stats.h"
#include "traces/chakra/chakra_test_util.h"
#include "traces/trace_io.h"
#include "traces/trace_test_util.h"

namespace collide::traces::chakra {
namespace {

namespace fs = std::filesystem;
using namespace testing;

TEST(ChakraImport, TwoRankJob) {
  const TempDir tmp("two_rank");
  const fs::path& dir = tmp.path;
  write_two_rank_job(dir);
  const std::string out = (dir / "job.trace").string();
  auto report = import_chakra({dir.string()}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ops, 8u);
  EXPECT_EQ(report->ranks, 2u);
  EXPECT_EQ(report->units_read, 14u);
  EXPECT_EQ(report->problems_total, 0u);

  const LoadedTrace t = load_trace(out);
  EXPECT_EQ(t.header.source_format(), v1::SOURCE_FORMAT_CHAKRA_ET);
  EXPECT_EQ(t.header.world_size(), 2u);
  ASSERT_EQ(t.header.communicators_size(), 2);
  EXPECT_EQ(t.header.communicators(0).id(), "0");      // from the comm-group file
  EXPECT_EQ(t.header.communicators(1).id(), "world");  // for nodes without a pg_name
  EXPECT_EQ(t.header.metadata().at(kVersionKey), "0.0.4");
  ASSERT_EQ(t.ops.size(), 8u);

  const v1::Op& ar = t.ops[0];
  EXPECT_EQ(ar.rank(), 0u);
  EXPECT_EQ(ar.index(), 0u);
  EXPECT_EQ(ar.kind(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(ar.comm(), "0");
  EXPECT_EQ(ar.bytes(), 1u << 20);
  EXPECT_EQ(ar.count(), 1u << 20);
  EXPECT_EQ(ar.datatype(), v1::DATA_TYPE_UINT8);
  EXPECT_EQ(ar.compute_before_ns(), 40'000u);  // the CPU op's 5 us does not count
  EXPECT_EQ(ar.enqueue_time_ns(), 100'000u);
  EXPECT_EQ(ar.root(), -1);
  EXPECT_TRUE(ar.deps().empty());
  EXPECT_NE(ar.source().find("job.0.et:record 3"), std::string::npos) << ar.source();

  const v1::Op& ag = t.ops[1];
  EXPECT_EQ(ag.kind(), v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(ag.comm(), "world");
  EXPECT_EQ(ag.compute_before_ns(), 7'000u);
  EXPECT_FALSE(ag.has_enqueue_time_ns());
  EXPECT_TRUE(ag.deps().empty());  // its only dependency is the op before it: issue order

  const v1::Op& send = t.ops[2];
  EXPECT_EQ(send.kind(), v1::OP_KIND_SEND);
  EXPECT_EQ(send.root(), 1);
  EXPECT_EQ(send.bytes(), 512u);
  EXPECT_FALSE(send.has_compute_before_ns());

  const v1::Op& rs = t.ops[3];
  EXPECT_EQ(rs.kind(), v1::OP_KIND_REDUCE_SCATTER);
  ASSERT_EQ(rs.deps_size(), 1);
  EXPECT_EQ(rs.deps(0), 0u);  // the data dependency on COMP node 4 reaches the all-reduce

  const v1::Op& recv = t.ops[6];
  EXPECT_EQ(recv.rank(), 1u);
  EXPECT_EQ(recv.kind(), v1::OP_KIND_RECV);
  EXPECT_EQ(recv.root(), 0);
}

// The same job as files on disk, so the format read stays the format written.
TEST(ChakraImport, CommittedFixture) {
  const TempDir tmp("fixture");
  const fs::path& dir = tmp.path;
  const std::string out = (dir / "job.trace").string();
  auto report = import_chakra({std::string(COLLIDE_CHAKRA_TESTDATA) + "/two_rank"}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ops, 8u);
  EXPECT_EQ(report->problems_total, 0u);
  const LoadedTrace t = load_trace(out);
  ASSERT_EQ(t.ops.size(), 8u);
  EXPECT_EQ(t.ops[3].kind(), v1::OP_KIND_REDUCE_SCATTER);
  EXPECT_EQ(t.ops[3].deps_size(), 1);
  EXPECT_EQ(t.ops[0].compute_before_ns(), 40'000u);

  auto text = import_chakra({std::string(COLLIDE_CHAKRA_TESTDATA) + "/not_chakra.0.et"}, out, {});
  ASSERT_THAT(text, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(text.status().message().find("not_chakra.0.et: record 0"), std::string::npos)
      << text.status().message();
}

TEST(ChakraImport, GroupsWithoutMembersSpanTheWorld) {
  const TempDir tmp("no_json");
  const fs::path& dir = tmp.path;
  write_two_rank_job(dir);
  fs::remove(dir / "groups.json");
  const std::string out = (dir / "job.trace").string();
  auto report = import_chakra({(dir / "job.0.et").string(), (dir / "job.1.et").string()}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const LoadedTrace t = load_trace(out);
  ASSERT_EQ(t.header.communicators_size(), 2);
  EXPECT_EQ(t.header.communicators(0).ranks_size(), 2);
}

TEST(ChakraImport, UnusableNodeIsAProblemNamingFileAndRecord) {
  const TempDir tmp("bad_node");
  const fs::path& dir = tmp.path;
  ChakraProtoMsg::Node no_type;
  no_type.set_id(2);
  no_type.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  add_int64_attr(no_type, "comm_size", 10);
  write_file(dir / "t.0.et", et_bytes({coll(1, ChakraProtoMsg::ALL_REDUCE, 8, ""), no_type,
                                       coll(3, 42, 8, ""), p2p(4, true, 0, 9, 8)}));
  const std::string out = (dir / "t.trace").string();
  ImportOptions one_rank;  // said, so the lone file is not a problem of its own
  one_rank.world_size = 1;
  auto report = import_chakra({dir.string()}, out, one_rank);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ops, 1u);
  ASSERT_EQ(report->problems_total, 3u);
  EXPECT_NE(report->problems[0].where.find("t.0.et: record 2 (node 2)"), std::string::npos)
      << report->problems[0].where;
  EXPECT_NE(report->problems[0].what.find("comm_type"), std::string::npos);
  EXPECT_NE(report->problems[1].what.find("unknown comm_type 42"), std::string::npos);
  EXPECT_NE(report->problems[2].what.find("peer rank 9"), std::string::npos);

  ImportOptions strict = one_rank;
  strict.strict = true;
  auto failed = import_chakra({dir.string()}, out, strict);
  ASSERT_THAT(failed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(failed.status().message().find("t.0.et: record 2"), std::string::npos);
}

TEST(ChakraImport, BadFilesAreClearErrors) {
  const TempDir tmp("bad_files");
  const fs::path& dir = tmp.path;
  const std::string out = (dir / "x.trace").string();

  write_file(dir / "notes.0.et", "this is a text file, not a trace\nsecond line\n");
  auto text = import_chakra({(dir / "notes.0.et").string()}, out, {});
  ASSERT_THAT(text, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(text.status().message().find("notes.0.et"), std::string::npos);
  EXPECT_NE(text.status().message().find("not a Chakra .et file"), std::string::npos)
      << text.status().message();

  std::string bytes = et_bytes({comp(1, 3), coll(2, ChakraProtoMsg::ALL_REDUCE, 8, "")});
  write_file(dir / "cut.0.et", bytes.substr(0, bytes.size() - 3));
  auto cut = import_chakra({(dir / "cut.0.et").string()}, out, {});
  ASSERT_THAT(cut, StatusIs(StatusCode::kDataLoss));
  EXPECT_NE(cut.status().message().find("cut.0.et: record 2"), std::string::npos)
      << cut.status().message();

  write_file(dir / "unnamed.et", et_bytes({}));
  auto unnamed = import_chakra({(dir / "unnamed.et").string()}, out, {});
  ASSERT_THAT(unnamed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(unnamed.status().message().find("<prefix>.<rank>.et"), std::string::npos);

  EXPECT_THAT(import_chakra({(dir / "missing.0.et").string()}, out, {}),
              StatusIs(StatusCode::kNotFound));
  write_file(dir / "g.json", "{\"0\": [0, 5]}");
  write_file(dir / "ok.0.et", et_bytes({coll(1, ChakraProtoMsg::ALL_REDUCE, 8, "0")}));
  auto outside = import_chakra({(dir / "ok.0.et").string(), (dir / "g.json").string()}, out, {});
  ASSERT_THAT(outside, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(outside.status().message().find("rank 5"), std::string::npos)
      << outside.status().message();
}

// One collective of `type` with comm_size `bytes` on every one of `ranks` ranks; the traffic NCCL
// puts on the wire for the job, as `collide trace stats` counts it.
uint64_t wire_bytes_of_one_collective(const std::string& name, int64_t type, uint32_t ranks,
                                      int64_t bytes, v1::Op* first_op = nullptr) {
  const TempDir tmp(name);
  for (uint32_t r = 0; r < ranks; ++r) {
    write_file(tmp.path / fmt::format("job.{}.et", r), et_bytes({coll(1, type, bytes, "")}));
  }
  const std::string out = (tmp.path / "job.trace").string();
  auto report = import_chakra({tmp.path.string()}, out, {});
  EXPECT_TRUE(report.ok()) << report.status().message();
  if (!report.ok()) return 0;
  EXPECT_EQ(report->problems_total, 0u);
  if (first_op != nullptr) *first_op = load_trace(out).ops.at(0);
  auto stats = analysis::compute_trace_stats(out);
  EXPECT_TRUE(stats.ok()) << stats.status().message();
  return stats.ok() ? stats->job.nccl_bytes : 0;
}

// Chakra's PyTorch converter writes, and ASTRA-sim reads, comm_size as the whole input buffer of a
// reduce-scatter or all-to-all; NCCL's per-rank count is that divided by the group size.
TEST(ChakraImport, CommSizeOfReduceScatterAndAllToAllIsTheWholeBuffer) {
  constexpr uint64_t kMiB = 1 << 20;
  v1::Op rs;
  EXPECT_EQ(wire_bytes_of_one_collective("rs16", ChakraProtoMsg::REDUCE_SCATTER, 16, kMiB, &rs),
            15 * kMiB);
  EXPECT_EQ(rs.bytes(), kMiB / 16);
  v1::Op a2a;
  EXPECT_EQ(wire_bytes_of_one_collective("a2a4", ChakraProtoMsg::ALL_TO_ALL, 4, kMiB, &a2a),
            3 * kMiB);
  EXPECT_EQ(a2a.bytes(), kMiB / 4);
  // All-gather's comm_size is one rank's contribution; all-reduce's the whole buffer.
  v1::Op ag;
  EXPECT_EQ(wire_bytes_of_one_collective("ag4", ChakraProtoMsg::ALL_GATHER, 4, kMiB, &ag),
            12 * kMiB);
  EXPECT_EQ(ag.bytes(), kMiB);
  v1::Op ar;
  EXPECT_EQ(wire_bytes_of_one_collective("ar4", ChakraProtoMsg::ALL_REDUCE, 4, kMiB, &ar),
            6 * kMiB);
  EXPECT_EQ(ar.bytes(), kMiB);
}

TEST(ChakraImport, WholeBufferThatDoesNotSplitOverTheGroupIsAProblem) {
  const TempDir tmp("rs_uneven");
  for (uint32_t r = 0; r < 3; ++r) {
    write_file(tmp.path / fmt::format("job.{}.et", r),
               et_bytes({coll(1, ChakraProtoMsg::REDUCE_SCATTER, 1000, "")}));
  }
  auto report = import_chakra({tmp.path.string()}, (tmp.path / "job.trace").string(), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ops, 0u);
  ASSERT_EQ(report->problems_total, 3u);
  EXPECT_NE(report->problems[0].what.find("comm_size 1000"), std::string::npos)
      << report->problems[0].what;
}

// Rank 0's trace as Chakra's PyTorch converter writes it: the process-group record, CPU operators
// flagged with an int32 is_cpu_op, a host-side c10d:: collective record without comm_type beside
// the GPU kernel that is the collective.
std::vector<ChakraProtoMsg::Node> pytorch_rank0_nodes() {
  std::vector<ChakraProtoMsg::Node> nodes;
  ChakraProtoMsg::Node pg;
  pg.set_id(3);
  pg.set_name("## process_group:init ##");
  pg.set_type(ChakraProtoMsg::METADATA_NODE);
  pg.mutable_inputs()->set_values(
      R"(['[{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", )"
      R"("ranks": [], "group_size": 4, "group_count": 2}, {"pg_name": "5", "pg_desc": )"
      R"("undefined", "backend_config": "cuda:nccl", "ranks": [0, 2], "group_size": 2, )"
      R"("group_count": 2}]'])");
  nodes.push_back(pg);
  ChakraProtoMsg::Node cpu = comp(4, 50);
  add_int32_attr(cpu, "is_cpu_op", 1);
  nodes.push_back(cpu);
  nodes.push_back(comp(5, 30, {4}));
  for (uint64_t id : {6, 8}) {
    ChakraProtoMsg::Node host;
    host.set_id(id);
    host.set_name(id == 6 ? "c10d::allreduce_" : "c10d::_allgather_base_");
    host.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    host.add_ctrl_deps(id - 1);
    add_int32_attr(host, "is_cpu_op", 1);
    nodes.push_back(host);
    nodes.push_back(id == 6 ? coll(7, ChakraProtoMsg::ALL_REDUCE, 1 << 20, "0", {6})
                            : coll(9, ChakraProtoMsg::ALL_GATHER, 4096, "5", {8}));
  }
  return nodes;
}

TEST(ChakraImport, PyTorchRankZeroTraceTakesTheWorldFromItsProcessGroups) {
  const TempDir tmp("pytorch_rank0");
  write_file(tmp.path / "rank.0.et", et_bytes(pytorch_rank0_nodes()));
  const std::string out = (tmp.path / "job.trace").string();
  auto report = import_chakra({tmp.path.string()}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ops, 2u);
  EXPECT_EQ(report->ranks, 4u);
  // The only problem: the ranks whose files were not given.
  ASSERT_EQ(report->problems_total, 1u);
  EXPECT_NE(report->problems[0].what.find("3 of the 4 ranks (ranks 1-3)"), std::string::npos)
      << report->problems[0].what;
  // Host-side records: one line for all of them.
  ASSERT_EQ(report->notes.size(), 2u);
  EXPECT_NE(report->notes[0].find("4 ranks, from the process-group record at"), std::string::npos)
      << report->notes[0];
  EXPECT_NE(report->notes[1].find("2 host-side collective records"), std::string::npos)
      << report->notes[1];

  const LoadedTrace t = load_trace(out);
  EXPECT_EQ(t.header.world_size(), 4u);
  ASSERT_EQ(t.header.communicators_size(), 2);
  EXPECT_EQ(t.header.communicators(0).id(), "0");
  EXPECT_EQ(t.header.communicators(0).ranks_size(), 4);
  EXPECT_EQ(t.header.communicators(1).id(), "5");
  EXPECT_EQ(std::vector<uint32_t>(t.header.communicators(1).ranks().begin(),
                                  t.header.communicators(1).ranks().end()),
            (std::vector<uint32_t>{0, 2}));
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_EQ(t.ops[0].compute_before_ns(), 30'000u);  // the int32-flagged CPU op does not count
  auto stats = analysis::compute_trace_stats(out);
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->job.nccl_bytes, 2u * 3 * (1 << 20) + 1u * 2 * 4096);
}

TEST(ChakraImport, LoneRankWithoutProcessGroupsSaysHowToGiveTheWorldSize) {
  const TempDir tmp("lone_rank");
  write_file(tmp.path / "job.0.et", et_bytes({coll(1, ChakraProtoMsg::ALL_REDUCE, 1024, "")}));
  const std::string out = (tmp.path / "job.trace").string();
  auto alone = import_chakra({tmp.path.string()}, out, {});
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  ASSERT_EQ(alone->problems_total, 1u);
  EXPECT_NE(alone->problems[0].what.find("--world-size"), std::string::npos)
      << alone->problems[0].what;

  ImportOptions eight;
  eight.world_size = 8;
  auto given = import_chakra({tmp.path.string()}, out, eight);
  ASSERT_TRUE(given.ok()) << given.status().message();
  EXPECT_EQ(given->ranks, 8u);
  ASSERT_EQ(given->problems_total, 1u);
  EXPECT_NE(given->problems[0].what.find("ranks 1-7"), std::string::npos);
  EXPECT_EQ(load_trace(out).header.communicators(0).ranks_size(), 8);

  write_file(tmp.path / "job.3.et", et_bytes({coll(1, ChakraProtoMsg::ALL_REDUCE, 1024, "")}));
  ImportOptions two;
  two.world_size = 2;
  auto below = import_chakra({tmp.path.string()}, out, two);
  ASSERT_THAT(below, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(below.status().message().find("rank 3"), std::string::npos) << below.status().message();
}

TEST(ChakraImport, UnreadableProcessGroupRecordIsAProblemNamingFileAndRecord) {
  const TempDir tmp("bad_pg");
  ChakraProtoMsg::Node pg;
  pg.set_id(1);
  pg.set_name("## process_group:init ##");
  pg.set_type(ChakraProtoMsg::METADATA_NODE);
  pg.mutable_inputs()->set_values(R"(['[{"pg_name": "0", "ranks": [0, -1]}]'])");
  write_file(tmp.path / "job.0.et", et_bytes({pg}));
  const std::string out = (tmp.path / "j.trace").string();
  auto report = import_chakra({tmp.path.string()}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->problems_total, 1u);
  EXPECT_EQ(report->problems[0].where, (tmp.path / "job.0.et").string() + ": record 1 (node 1)");
  EXPECT_NE(report->problems[0].what.find("-1, which is not a rank"), std::string::npos)
      << report->problems[0].what;

  // PyTorch's first form, a Python literal: not JSON, and the trace still imports.
  pg.mutable_inputs()->set_values(
      R"(["[{'pg_id': 140538064364672, 'backend_config': 'cuda:nccl', 'ranks': {0: 0, 1: 1}}]"])");
  write_file(tmp.path / "job.0.et", et_bytes({pg, coll(2, ChakraProtoMsg::ALL_REDUCE, 64, "")}));
  ImportOptions two;
  two.world_size = 2;
  auto literal = import_chakra({tmp.path.string()}, out, two);
  ASSERT_TRUE(literal.ok()) << literal.status().message();
  EXPECT_EQ(literal->ops, 1u);
  ImportOptions strict = two;
  strict.strict = true;
  auto strict_fails = import_chakra({tmp.path.string()}, out, strict);
  ASSERT_THAT(strict_fails, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(strict_fails.status().message().find("record 1 (node 1)"), std::string::npos);
}

}  // namespace
}  // namespace collide::traces::chakra
