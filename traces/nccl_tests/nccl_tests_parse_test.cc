#include "traces/nccl_tests/nccl_tests_parse.h"

#include <gtest/gtest.h>

namespace collide::traces::nccl_tests {
namespace {

std::string testdata(const std::string& name) {
  return std::string(COLLIDE_NCCL_TESTS_TESTDATA) + "/" + name;
}

TEST(NcclTestsText, NewHeaderWithLauncherPrefixAndGluedLines) {
  auto p = read_baseline(testdata("new_header_all_reduce.txt"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  const v1::NcclTestsBaseline& b = p->baseline;
  EXPECT_EQ(b.test(), "all_reduce_perf");
  EXPECT_EQ(b.kind(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(b.source_format(), "text");
  EXPECT_EQ(b.ranks(), 4u);
  EXPECT_EQ(b.nccl_version(), "2.18.3+cuda12.2");
  EXPECT_EQ(b.nccl_tests_version(), "2.13.8");
  EXPECT_EQ(b.iterations(), 20u);
  EXPECT_EQ(b.warmup_iterations(), 5u);
  EXPECT_DOUBLE_EQ(b.avg_busbw_gbps(), 21.0125);
  EXPECT_EQ(b.out_of_bounds(), 0u);
  ASSERT_EQ(b.rows_size(), 4);
  const v1::NcclTestsRow& r = b.rows(2);
  EXPECT_EQ(r.size_bytes(), 1048576u);
  EXPECT_EQ(r.count(), 262144u);
  EXPECT_EQ(r.type(), "float");
  EXPECT_EQ(r.datatype(), v1::DATA_TYPE_FLOAT32);
  EXPECT_EQ(r.redop(), "sum");
  EXPECT_EQ(r.root(), -1);
  EXPECT_DOUBLE_EQ(r.out_of_place().time_us(), 112.5);
  EXPECT_DOUBLE_EQ(r.out_of_place().algbw_gbps(), 9.32);
  EXPECT_DOUBLE_EQ(r.out_of_place().busbw_gbps(), 13.98);
  EXPECT_EQ(r.out_of_place().wrong(), 0);
  EXPECT_DOUBLE_EQ(r.in_place().time_us(), 111.9);
  EXPECT_DOUBLE_EQ(r.in_place().busbw_gbps(), 14.06);
  EXPECT_EQ(r.line(), 18u);
  EXPECT_FALSE(b.rows(3).in_place().has_wrong());  // N/A
  EXPECT_TRUE(b.rows(3).out_of_place().has_wrong());
  // The cut-off row is reported with its line, not guessed at.
  ASSERT_EQ(p->problems.size(), 1u);
  EXPECT_NE(p->problems[0].find("new_header_all_reduce.txt:20:"), std::string::npos)
      << p->problems[0];
}

TEST(NcclTestsText, OldHeaderWithoutRootAndWithErrorColumn) {
  auto p = read_baseline(testdata("old_header_all_gather.txt"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  const v1::NcclTestsBaseline& b = p->baseline;
  EXPECT_EQ(b.test(), "all_gather_perf");  // from the command line
  EXPECT_EQ(b.kind(), v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(b.ranks(), 2u);
  EXPECT_EQ(b.nccl_version(), "2.7.8+cuda11.0");
  EXPECT_TRUE(p->problems.empty());
  ASSERT_EQ(b.rows_size(), 3);
  const v1::NcclTestsRow& r = b.rows(2);
  EXPECT_EQ(r.size_bytes(), 1048576u);
  EXPECT_EQ(r.count(), 131072u);
  EXPECT_EQ(r.root(), -1);
  EXPECT_TRUE(r.redop().empty());
  EXPECT_DOUBLE_EQ(r.out_of_place().time_us(), 70.02);
  EXPECT_DOUBLE_EQ(r.out_of_place().busbw_gbps(), 7.49);
  EXPECT_DOUBLE_EQ(r.out_of_place().max_error(), 1e-6);
  EXPECT_FALSE(r.out_of_place().has_wrong());
  EXPECT_DOUBLE_EQ(r.in_place().algbw_gbps(), 15.22);
  EXPECT_DOUBLE_EQ(b.avg_busbw_gbps(), 2.94833);
}

TEST(NcclTestsText, HeaderVariants) {
  // Per-iteration columns and a trailing timestamp (two tokens under one label).
  const std::string text =
      "# Collective test starting: broadcast_perf\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong   "
      "i_min   i_max   i_p99   i_cv%     time   algbw   busbw  #wrong   i_min   i_max   i_p99   "
      "i_cv%  timestamp\n"
      "        4096          1024     float    none       0    10.00    0.41    0.41       0    "
      "9.00   11.00   10.90    1.20    10.50    0.39    0.39       0    9.50   11.50   11.40    "
      "1.10  2025-01-01 10:00:00\n";
  auto p = parse_text(text, "b.log");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->baseline.rows_size(), 1) << (p->problems.empty() ? "" : p->problems[0]);
  EXPECT_EQ(p->baseline.kind(), v1::OP_KIND_BROADCAST);
  EXPECT_EQ(p->baseline.rows(0).root(), 0);
  EXPECT_DOUBLE_EQ(p->baseline.rows(0).in_place().time_us(), 10.5);
  // CPU time.
  auto cpu = parse_text(
      "#  size count type redop root cputime algbw busbw #wrong cputime algbw busbw #wrong\n"
      "  8 2 float sum -1 5.0 0.0 0.0 0 5.1 0.0 0.0 0\n",
      "c.log");
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->baseline.rows(0).out_of_place().cpu_time());
}

TEST(NcclTestsText, NotNcclTestsOutput) {
  auto p = parse_text("hello\nworld\n", "x.log");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("x.log"), std::string::npos);
  EXPECT_FALSE(parse_text(std::string("\x01\0\x02", 3), "x.bin").ok());
}

TEST(NcclTestsJson, Version2Report) {
  auto p = read_baseline(testdata("all_reduce.json"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  const v1::NcclTestsBaseline& b = p->baseline;
  EXPECT_EQ(b.source_format(), "json");
  EXPECT_EQ(b.test(), "all_reduce_perf");
  EXPECT_EQ(b.kind(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(b.nccl_version(), "2.27.3");
  EXPECT_EQ(b.ranks(), 2u);
  EXPECT_EQ(b.iterations(), 20u);
  EXPECT_DOUBLE_EQ(b.avg_busbw_gbps(), 14.95);
  ASSERT_EQ(b.rows_size(), 2);
  EXPECT_EQ(b.rows(1).size_bytes(), 1048576u);
  EXPECT_EQ(b.rows(1).root(), -1);
  EXPECT_DOUBLE_EQ(b.rows(1).out_of_place().busbw_gbps(), 29.75);
  EXPECT_FALSE(b.rows(1).out_of_place().has_wrong());
  EXPECT_EQ(b.rows(1).in_place().wrong(), 0);
  EXPECT_TRUE(p->problems.empty());
}

TEST(NcclTestsJson, BadJsonNamesTheLine) {
  auto p = parse_json("{\n\"results\": [\n{\"size\": }\n]}", "r.json");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("r.json:3"), std::string::npos) << p.status().message();
  EXPECT_FALSE(parse_json("{\"version\": 2}", "r.json").ok());
  auto partial = parse_json(R"({"results": [{"size": 8}]})", "r.json");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->problems.size(), 1u);
}

TEST(NcclTests, KindFromName) {
  EXPECT_EQ(kind_from_test_name("./build/reduce_scatter_perf"), v1::OP_KIND_REDUCE_SCATTER);
  EXPECT_EQ(kind_from_test_name("alltoall_perf_mpi"), v1::OP_KIND_ALL_TO_ALL);
  EXPECT_EQ(kind_from_test_name("sendrecv_perf"), v1::OP_KIND_SEND);
  EXPECT_EQ(kind_from_test_name("mystery"), v1::OP_KIND_UNSPECIFIED);
}

}  // namespace
}  // namespace collide::traces::nccl_tests
