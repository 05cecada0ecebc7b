#include "traces/aicb/aicb_workload.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "tests/support/status_matchers.h"

namespace collide::traces::aicb {
namespace {

std::string testdata(const std::string& name) {
  return std::string(COLLIDE_AICB_TESTDATA) + "/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(AicbWorkload, ParsesLineOneAndLayers) {
  ImportReport report;
  auto w = parse_workload(slurp(testdata("tp2_pp2_dp2.txt")), "w.txt", {}, report);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->policy, "HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  EXPECT_EQ(w->tp, 2u);
  EXPECT_EQ(w->pp, 2u);
  EXPECT_EQ(w->ep, 1u);
  EXPECT_EQ(w->vpp, 2u);
  EXPECT_EQ(w->all_gpus, 8u);
  EXPECT_EQ(w->pp_comm, 65536u);
  EXPECT_EQ(w->params.at("checkpoints"), "0");
  ASSERT_EQ(w->layers.size(), 2u);
  const Layer& mlp = w->layers[1];
  EXPECT_EQ(mlp.name, "mlp");
  EXPECT_EQ(mlp.line, 4u);
  EXPECT_EQ(mlp.fwd_compute, 1500u);
  EXPECT_EQ(mlp.fwd.kind, v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(mlp.fwd.bytes, 2097152u);
  EXPECT_EQ(mlp.ig.kind, v1::OP_KIND_REDUCE_SCATTER);
  EXPECT_EQ(mlp.wg.kind, v1::OP_KIND_UNSPECIFIED);
  EXPECT_EQ(mlp.wg_compute, 3500u);
  EXPECT_EQ(report.problems_total, 0u);
}

TEST(AicbWorkload, CommTypesAndSuffixes) {
  auto ep = parse_comm_type("ALLTOALL_EP");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->kind, v1::OP_KIND_ALL_TO_ALL);
  EXPECT_EQ(ep->group, Group::kEp);
  auto dpep = parse_comm_type("REDUCESCATTER_DP_EP");
  ASSERT_TRUE(dpep.ok());
  EXPECT_EQ(dpep->kind, v1::OP_KIND_REDUCE_SCATTER);
  EXPECT_EQ(dpep->group, Group::kDpEp);
  auto plain = parse_comm_type("BROADCAST");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->group, Group::kDefault);
  EXPECT_THAT(parse_comm_type("ALLREDUCE_XX"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_comm_type("allreduce"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(AicbWorkload, WrongColumnCountNamesFileAndLine) {
  const std::string text = slurp(testdata("bad_columns.txt"));
  ImportReport report;
  auto w = parse_workload(text, "bad_columns.txt", {}, report);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->layers.size(), 2u);
  ASSERT_EQ(report.problems_total, 1u);
  EXPECT_EQ(report.problems[0].where, "bad_columns.txt:4");
  EXPECT_NE(report.problems[0].what.find("12 columns, this one has 10"), std::string::npos)
      << report.problems[0].what;

  ImportOptions strict;
  strict.strict = true;
  ImportReport strict_report;
  auto failed = parse_workload(text, "bad_columns.txt", strict, strict_report);
  ASSERT_THAT(failed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(failed.status().message().find("bad_columns.txt:4:"), std::string::npos)
      << failed.status().message();
}

TEST(AicbWorkload, StructuralErrors) {
  ImportReport report;
  auto no_count = parse_workload("HYBRID model_parallel_NPU_group: 2\nlots\n", "x.txt", {}, report);
  ASSERT_THAT(no_count, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(no_count.status().message().find("x.txt:2"), std::string::npos);
  auto bad_key = parse_workload("HYBRID model_parallel_NPU_group 2\n1\n", "x.txt", {}, report);
  ASSERT_THAT(bad_key, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad_key.status().message().find("x.txt:1"), std::string::npos);
  auto zero_tp = parse_workload("HYBRID model_parallel_NPU_group: 0\n0\n", "x.txt", {}, report);
  EXPECT_THAT(zero_tp, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_workload("", "x.txt", {}, report), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_workload(std::string("\x01\x02\0\x03", 4), "x.txt", {}, report),
              StatusIs(StatusCode::kInvalidArgument));
  auto bad_number =
      parse_workload("P all_gpus: 2\n1\nl -1 x NONE 0 1 NONE 0 1 NONE 0 1\n", "x.txt", {}, report);
  ASSERT_TRUE(bad_number.ok());
  EXPECT_EQ(report.problems.back().where, "x.txt:3");
  EXPECT_NE(report.problems.back().what.find("fwd compute 'x'"), std::string::npos);
}

TEST(AicbWorkload, LayerCountMismatchIsReported) {
  ImportReport report;
  auto w =
      parse_workload("P all_gpus: 2\n3\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n", "x.txt", {}, report);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(report.problems_total, 1u);
  EXPECT_NE(report.problems[0].what.find("announces 3"), std::string::npos);
}

}  // namespace
}  // namespace collide::traces::aicb
