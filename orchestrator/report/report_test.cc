#include "orchestrator/report/report.h"

#include <gtest/gtest.h>

#include "orchestrator/report/html_report.h"

namespace collide::orchestrator::report {
namespace {

// Four ranks doing `n` all-reduces of 1 MB one after the other, each taking `us` microseconds,
// with rank skew of 10 us at each start.
RunResult run(const std::string& variant, uint32_t rep, int n, double us) {
  RunResult r;
  r.variant = variant;
  r.repetition = rep;
  uint64_t t = 1'000'000;
  for (int k = 0; k < n; ++k) {
    for (uint32_t rank = 0; rank < 4; ++rank) {
      OpTiming op;
      op.rank = rank;
      op.op_index = static_cast<uint64_t>(k);
      op.kind = v1::OP_KIND_ALL_REDUCE;
      op.comm = "world";
      op.comm_size = 4;
      op.bytes = 1'000'000;
      op.start_ns = t + rank * 10'000;
      op.end_ns = t + static_cast<uint64_t>(us * 1000);
      r.ops.push_back(op);
    }
    t += static_cast<uint64_t>(us * 1000);
  }
  r.packets_sent = 1000;
  return r;
}

TEST(ReportTest, CollectiveTimeSpansFirstStartToLastEnd) {
  const RunResult r = run("baseline", 0, 3, 100);
  const auto c = collective_times(r);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].ranks_seen, 4u);
  EXPECT_DOUBLE_EQ(c[0].seconds() * 1e6, 100.0);
  EXPECT_EQ(job_completion_ns(r), 300'000u);
  ASSERT_EQ(iteration_completion_ns(r).size(), 1u);
}

TEST(ReportTest, SlowdownAgainstBaselineWithConfidenceInterval) {
  std::vector<RunResult> runs;
  for (uint32_t rep = 0; rep < 3; ++rep) {
    runs.push_back(run("baseline", rep, 10, 100 + rep));
    runs.push_back(run("lossy", rep, 10, 150 + 2 * rep));
  }
  RunResult failed = run("lossy", 3, 1, 1);
  failed.failed = true;
  failed.failure = "NET/IB: ... IBV_WC_RETRY_EXC_ERR";
  runs.push_back(failed);

  const Report rep = build_report("unit", runs);
  ASSERT_EQ(rep.variants.size(), 2u);
  EXPECT_EQ(rep.variants[0].name, "baseline");
  const VariantSummary& lossy = rep.variants[1];
  EXPECT_EQ(lossy.runs, 4u);
  EXPECT_EQ(lossy.failed_runs, 1u);
  EXPECT_NEAR(lossy.slowdown.mean, 1.5, 0.03);
  EXPECT_LT(lossy.slowdown.low, lossy.slowdown.mean);
  EXPECT_GT(lossy.slowdown.high, lossy.slowdown.mean);
  EXPECT_NEAR(rep.variants[0].slowdown.mean, 1.0, 1e-9);
  EXPECT_NEAR(lossy.p50_us, 152, 1e-9);
  EXPECT_EQ(lossy.collective_us.size(), 30u);
  // nccl-tests: 1 MB all-reduce in 152 us is 6.58 GB/s algbw, x 2(n-1)/n = 1.5 busbw.
  ASSERT_EQ(lossy.sizes.size(), 1u);
  EXPECT_NEAR(lossy.sizes[0].algbw_gbytes, 1e6 / 152e3, 1e-6);
  EXPECT_NEAR(lossy.sizes[0].busbw_gbytes, 1.5 * 1e6 / 152e3, 1e-6);
  const auto j = report_json(rep);
  EXPECT_EQ(j["variants"][1]["failed_runs"], 1);
  EXPECT_NE(size_table(lossy).find("all_reduce"), std::string::npos);
}

TEST(ReportTest, HtmlIsSelfContainedWithChartsAndFaultWindows) {
  std::vector<RunResult> runs = {run("baseline", 0, 5, 100), run("lossy", 0, 5, 120)};
  runs[1].faults.push_back({"lossy-h1", "loss", 1'100'000, 1'300'000, 5000, 50});
  const Report rep = build_report("demo <&>", runs);
  const std::string html = render_html(rep, runs);
  EXPECT_NE(html.find("<svg class=\"chart\" id=\"cdf\""), std::string::npos);
  EXPECT_NE(html.find("id=\"timeline-lossy\""), std::string::npos);
  EXPECT_NE(html.find("class=\"fault\""), std::string::npos);
  EXPECT_NE(html.find("demo &lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::report
