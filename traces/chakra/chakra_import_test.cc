#include "traces/chakra/chakra_import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "traces/analysis/trace_stats.h"
#include "traces/chakra/chakra_test_util.h"
#include "traces/trace_io.h"

namespace collide::traces::chakra {
namespace {

namespace fs = std::filesystem;
using namespace testing;

struct Loaded {
  v1::TraceHeader header;
  std::vector<v1::Op> ops;
};

Loaded load(const std::string& path) {
  Loaded l;
  auto reader = TraceReader::open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return l;
  l.header = (*reader)->header();
  v1::Op op;
  while (*(*reader)->next(op)) l.ops.push_back(op);
  return l;
}

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

  const Loaded t = load(out);
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
  const Loaded t = load(out);
  ASSERT_EQ(t.ops.size(), 8u);
  EXPECT_EQ(t.ops[3].kind(), v1::OP_KIND_REDUCE_SCATTER);
  EXPECT_EQ(t.ops[3].deps_size(), 1);
  EXPECT_EQ(t.ops[0].compute_before_ns(), 40'000u);

  auto text = import_chakra({std::string(COLLIDE_CHAKRA_TESTDATA) + "/not_chakra.0.et"}, out, {});
  ASSERT_FALSE(text.ok());
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
  const Loaded t = load(out);
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
  auto report = import_chakra({dir.string()}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->ops, 1u);
  ASSERT_EQ(report->problems_total, 3u);
  EXPECT_NE(report->problems[0].where.find("t.0.et: record 2 (node 2)"), std::string::npos)
      << report->problems[0].where;
  EXPECT_NE(report->problems[0].what.find("comm_type"), std::string::npos);
  EXPECT_NE(report->problems[1].what.find("unknown comm_type 42"), std::string::npos);
  EXPECT_NE(report->problems[2].what.find("peer rank 9"), std::string::npos);

  ImportOptions strict;
  strict.strict = true;
  auto failed = import_chakra({dir.string()}, out, strict);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("t.0.et: record 2"), std::string::npos);
}

TEST(ChakraImport, BadFilesAreClearErrors) {
  const TempDir tmp("bad_files");
  const fs::path& dir = tmp.path;
  const std::string out = (dir / "x.trace").string();

  write_file(dir / "notes.0.et", "this is a text file, not a trace\nsecond line\n");
  auto text = import_chakra({(dir / "notes.0.et").string()}, out, {});
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("notes.0.et"), std::string::npos);
  EXPECT_NE(text.status().message().find("not a Chakra .et file"), std::string::npos)
      << text.status().message();

  std::string bytes = et_bytes({comp(1, 3), coll(2, ChakraProtoMsg::ALL_REDUCE, 8, "")});
  write_file(dir / "cut.0.et", bytes.substr(0, bytes.size() - 3));
  auto cut = import_chakra({(dir / "cut.0.et").string()}, out, {});
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("cut.0.et: record 2"), std::string::npos)
      << cut.status().message();

  write_file(dir / "unnamed.et", et_bytes({}));
  auto unnamed = import_chakra({(dir / "unnamed.et").string()}, out, {});
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.status().message().find("<prefix>.<rank>.et"), std::string::npos);

  EXPECT_FALSE(import_chakra({(dir / "missing.0.et").string()}, out, {}).ok());
  write_file(dir / "g.json", "{\"0\": [0, 5]}");
  write_file(dir / "ok.0.et", et_bytes({coll(1, ChakraProtoMsg::ALL_REDUCE, 8, "0")}));
  auto outside = import_chakra({(dir / "ok.0.et").string(), (dir / "g.json").string()}, out, {});
  ASSERT_FALSE(outside.ok());
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
  if (first_op != nullptr) *first_op = load(out).ops.at(0);
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

}  // namespace
}  // namespace collide::traces::chakra
