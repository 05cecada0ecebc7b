#include "traces/inspector/inspector_import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/support/status_matchers.h"
#include "traces/trace_test_util.h"

namespace collide::traces::inspector {
namespace {

namespace fs = std::filesystem;

const std::string kData = COLLIDE_INSPECTOR_TESTDATA;


fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("collide_inspector_" + std::to_string(::getpid()) + name);
}

TEST(InspectorImport, FourProcessesGiveRanksCommunicatorsAndMeasuredTimes) {
  const std::string out = temp("a.trace").string();
  auto report = import_nccl_inspector({kData}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->problems_total, 0u);
  EXPECT_EQ(report->ranks, 4u);
  EXPECT_EQ(report->communicators, 3u);
  EXPECT_EQ(report->ops, 24u);
  const LoadedTrace l = load_trace(out);
  fs::remove(out);
  EXPECT_EQ(l.header.source_format(), v1::SOURCE_FORMAT_NCCL_INSPECTOR);
  EXPECT_EQ(l.header.world_size(), 4u);
  std::map<std::string, std::vector<uint32_t>> members;
  for (const auto& c : l.header.communicators()) {
    members[c.id()] = {c.ranks().begin(), c.ranks().end()};
  }
  EXPECT_EQ(members["0x1f00"], (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(members["0x2a02"], (std::vector<uint32_t>{2, 3}));
  std::map<uint32_t, std::vector<v1::Op>> by_rank;
  for (const v1::Op& op : l.ops) by_rank[op.rank()].push_back(op);
  ASSERT_EQ(by_rank[2].size(), 6u);
  const v1::Op& first = by_rank[2][0];
  EXPECT_EQ(first.kind(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(first.bytes(), 268435456u);
  EXPECT_EQ(first.op_count(), 17u);
  EXPECT_EQ(first.measured_duration_ns(), 2'120'000u);
  EXPECT_EQ(first.index(), 0u);
  const v1::Op& gather = by_rank[2][1];
  EXPECT_EQ(gather.kind(), v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(gather.comm(), "0x2a02");
  EXPECT_EQ(gather.measured_duration_ns(), 31'000u);
  EXPECT_NE(gather.source().find("node-b-pid5201.log:2"), std::string::npos);
}

TEST(InspectorImport, BadLinesNameFileLineAndField) {
  const fs::path dir = temp("bad");
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(kData)) {
    if (entry.path().extension() == ".log") fs::copy_file(entry.path(), dir / entry.path().filename());
  }
  {
    std::ofstream f(dir / "node-a-pid4101.log", std::ios::app);
    f << R"({"header":{"id":"0x1f00","rank":0,"n_ranks":4,"nnodes":2},)"
      << R"("coll_perf":{"coll":"AllReduce","coll_sn":-3,"coll_msg_size_bytes":8,"coll_exec_time_us":1}})"
      << "\n{not json\n";
  }
  const std::string out = temp("b.trace").string();
  ImportOptions strict;
  strict.strict = true;
  auto failed = import_nccl_inspector({dir.string()}, out, strict);
  ASSERT_THAT(failed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(failed.status().message().find("node-a-pid4101.log:7: coll_perf: coll_sn: negative"),
            std::string::npos)
      << failed.status().message();
  auto lenient = import_nccl_inspector({dir.string()}, out, {});
  ASSERT_TRUE(lenient.ok()) << lenient.status().message();
  EXPECT_EQ(lenient->problems_total, 2u);
  ASSERT_EQ(lenient->problems.size(), 2u);
  EXPECT_NE(lenient->problems[1].where.find("node-a-pid4101.log:8"), std::string::npos);
  EXPECT_EQ(lenient->problems[1].what, "not a JSON object on one line");
  EXPECT_EQ(lenient->ops, 24u);
  fs::remove_all(dir);
  fs::remove(out);
}

}  // namespace
}  // namespace collide::traces::inspector
