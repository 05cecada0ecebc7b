#include "traces/nccl_tests/nccl_tests_parse.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

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
  ASSERT_THAT(p, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(p.status().message().find("x.log"), std::string::npos);
  EXPECT_THAT(parse_text(std::string("\x01\0\x02", 3), "x.bin"),
              StatusIs(StatusCode::kInvalidArgument));
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
  ASSERT_THAT(p, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(p.status().message().find("r.json:3"), std::string::npos) << p.status().message();
  EXPECT_THAT(parse_json("{\"version\": 2}", "r.json"), StatusIs(StatusCode::kInvalidArgument));
  auto partial = parse_json(
      R"({"results": [{"size": 8}, {"size": 16, "count": 4, "type": "float", "redop": "sum",
          "out_of_place": {"time": 9.5, "alg_bw": 0.1, "bus_bw": 0.1}}]})",
      "r.json");
  ASSERT_TRUE(partial.ok()) << partial.status().message();
  EXPECT_EQ(partial->problems.size(), 1u);
  EXPECT_EQ(partial->baseline.rows_size(), 1);
  auto none = parse_json(R"({"results": [{"size": 8}]})", "r.json");
  ASSERT_THAT(none, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(none.status().message().find("no results"), std::string::npos);
}

// A run that died after printing its table header: not a baseline, and saying so.
TEST(NcclTestsText, HeaderWithoutRowsIsAnError) {
  const std::string text =
      "# nccl-tests version 2.13.8 nccl-headers=21803 nccl-library=21803\n"
      "# Collective test starting: all_reduce_perf\n"
      "#\n"
      "#                                                              out-of-place                "
      "       in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)       \n"
      "node1:1234:1234 [0] NCCL INFO comm 0x55d0 rank 0 nranks 4 cudaDev 0 busId 1000 - Abort\n";
  auto p = parse_text(text, "dead.txt");
  ASSERT_THAT(p, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(p.status().message().find("dead.txt:5"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("no result rows"), std::string::npos);
}

TEST(NcclTestsText, IterationCountsAreCheckedNumbers) {
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: "
      "99999999999 agg iters: 1 validation: 1 graph: 0\n"
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
      "8  2  float  sum  -1  9.1  0.00  0.00  0  9.0  0.00  0.00  0\n";
  auto p = parse_text(text, "big.txt");
  ASSERT_THAT(p, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(p.status().message().find("big.txt:1"), std::string::npos) << p.status().message();
}

// rccl-tests --output_file: one JSON record per result and line; out-of-place and in-place of one
// size make one row.
TEST(RcclTestsJson, JsonLinesFromOutputFile) {
  auto p = read_baseline(testdata("rccl_all_to_all.jsonl"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  const v1::NcclTestsBaseline& b = p->baseline;
  EXPECT_TRUE(p->problems.empty()) << p->problems.front();
  EXPECT_EQ(b.test(), "alltoall_perf");
  EXPECT_EQ(b.kind(), v1::OP_KIND_ALL_TO_ALL);
  EXPECT_EQ(b.ranks(), 4u);
  ASSERT_EQ(b.rows_size(), 2);
  EXPECT_EQ(b.rows(0).size_bytes(), 1024u);
  EXPECT_EQ(b.rows(0).datatype(), v1::DATA_TYPE_FLOAT32);
  EXPECT_EQ(b.rows(0).root(), -1);
  EXPECT_DOUBLE_EQ(b.rows(0).out_of_place().time_us(), 24.79);
  EXPECT_DOUBLE_EQ(b.rows(0).in_place().time_us(), 25.47);
  EXPECT_EQ(b.rows(0).in_place().wrong(), 0);
  EXPECT_DOUBLE_EQ(b.rows(1).out_of_place().busbw_gbps(), 16.35);
  EXPECT_FALSE(b.rows(1).out_of_place().has_wrong());
  EXPECT_DOUBLE_EQ(b.rows(1).in_place().algbw_gbps(), 21.5);
}

// The list rccl-tests write now, from a build with MPI: 2 ranks of 8 GPUs.
TEST(RcclTestsJson, ListFromAnMpiBuild) {
  auto p = read_baseline(testdata("rccl_all_reduce_mpi.json"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  const v1::NcclTestsBaseline& b = p->baseline;
  EXPECT_TRUE(p->problems.empty()) << p->problems.front();
  EXPECT_EQ(b.test(), "all_reduce_perf");
  EXPECT_EQ(b.ranks(), 16u);
  ASSERT_EQ(b.rows_size(), 2);
  EXPECT_EQ(b.rows(0).datatype(), v1::DATA_TYPE_BFLOAT16);
  EXPECT_DOUBLE_EQ(b.rows(0).in_place().busbw_gbps(), 32.299645);
  EXPECT_EQ(b.rows(0).out_of_place().wrong(), 0);
  EXPECT_FALSE(b.rows(1).out_of_place().has_wrong());
  EXPECT_FALSE(b.rows(1).has_in_place());
}

TEST(RcclTestsJson, ListFormAndBadRecords) {
  auto list = parse_rccl_json(
      R"([{"#wrong":"0","algBw":1.5,"busBw":2.625,"gpus":8,"inPlace":0,"name":"AllReduce",
           "redop":"sum","size":65536,"time":43.7,"type":"bfloat16"},
          {"size": 131072, "busBw": "fast"}])",
      "r.json");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(list->baseline.test(), "all_reduce_perf");
  EXPECT_EQ(list->baseline.kind(), v1::OP_KIND_ALL_REDUCE);
  ASSERT_EQ(list->baseline.rows_size(), 1);
  EXPECT_EQ(list->baseline.rows(0).datatype(), v1::DATA_TYPE_BFLOAT16);
  ASSERT_EQ(list->problems.size(), 1u);
  EXPECT_NE(list->problems[0].find("r.json: [1]"), std::string::npos) << list->problems[0];

  auto broken = parse_rccl_json("{\"size\": 8, \"busBw\": 1\n{oops\n", "x.jsonl");
  ASSERT_THAT(broken, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(broken.status().message().find("x.jsonl"), std::string::npos);
}

TEST(NcclTests, KindFromName) {
  EXPECT_EQ(kind_from_test_name("./build/reduce_scatter_perf"), v1::OP_KIND_REDUCE_SCATTER);
  EXPECT_EQ(kind_from_test_name("alltoall_perf_mpi"), v1::OP_KIND_ALL_TO_ALL);
  EXPECT_EQ(kind_from_test_name("sendrecv_perf"), v1::OP_KIND_SEND);
  EXPECT_EQ(kind_from_test_name("mystery"), v1::OP_KIND_UNSPECIFIED);
}

}  // namespace
}  // namespace collide::traces::nccl_tests
