// Several jobs at once in the report: each job's own JCT from its own ranks' ops, its slowdown
// against its baseline, and together against alone.
#include "orchestrator/report/job_results.h"

#include <gtest/gtest.h>

#include "orchestrator/report/html_report.h"
#include "orchestrator/report/report.h"

namespace collide::orchestrator::report {
namespace {

// A run in which the job on ranks {0, 1} takes `train_ms` and the one on {2, 3} `tenant_ms`,
// both starting at 1 s; a job given 0 ms ran nothing.
RunResult run_of(const std::string& variant, uint32_t repetition, double train_ms, double tenant_ms) {
  RunResult r;
  r.variant = variant;
  r.repetition = repetition;
  const auto add = [&r](uint32_t rank, double ms) {
    if (ms == 0) return;
    OpTiming op;
    op.rank = rank;
    op.kind = v1::OP_KIND_ALL_REDUCE;
    op.comm_size = 2;
    op.bytes = 1 << 20;
    op.start_ns = 1'000'000'000;
    op.end_ns = op.start_ns + static_cast<uint64_t>(ms * 1e6);
    r.ops.push_back(op);
  };
  add(0, train_ms);
  add(1, train_ms * 0.9);
  add(2, tenant_ms);
  add(3, tenant_ms);
  return r;
}

const std::vector<JobRanks> kJobs = {{"train", {0}, {0, 1}, "alone:train", {}}, {"tenant", {1}, {2, 3}, "alone:tenant", {}}};

TEST(JobResultsTest, EachJobsJctIsItsOwnRanksFirstStartToLastEnd) {
  const RunResult run = run_of("baseline", 0, 40, 10);
  EXPECT_EQ(job_completion_ns(run, kJobs[0]), 40'000'000u);
  EXPECT_EQ(job_completion_ns(run, kJobs[1]), 10'000'000u);
  EXPECT_EQ(job_completion_ns(run_of("alone:train", 0, 40, 0), kJobs[1]), 0u);
}

// The training job is 1.5x slower with the tenant beside it, at every repetition; the tenant is
// as fast either way (within 1%): interference on one, none detectable on the other. A loss
// variant slows the training job against its own baseline.
TEST(JobResultsTest, TogetherAgainstAloneShowsWhichJobTheOtherSlows) {
  std::vector<RunResult> runs;
  for (uint32_t rep = 0; rep < 3; ++rep) {
    const double wobble = 1 + 0.01 * rep;
    runs.push_back(run_of("baseline", rep, 60 * wobble, 10 * wobble));
    runs.push_back(run_of("alone:train", rep, 40 * wobble, 0));
    runs.push_back(run_of("alone:tenant", rep, 0, 10 * (1.005 - 0.005 * rep)));
    runs.push_back(run_of("loss", rep, 120 * wobble, 10 * wobble));
  }
  const Report report = build_report("tenants", runs, kJobs);
  ASSERT_EQ(report.variants.size(), 4u);
  const VariantSummary& baseline = report.variants[0];
  ASSERT_EQ(baseline.jobs.size(), 2u);
  EXPECT_EQ(baseline.jobs[0].name(), "train");
  EXPECT_NEAR(baseline.jobs[0].jct_mean_seconds(), 0.0606, 1e-4);
  EXPECT_EQ(baseline.jobs[0].slowdown_ci95_size(), 0);  // the baseline is what slowdowns are against
  // An alone variant holds its own job only.
  ASSERT_EQ(report.variants[1].name, "alone:train");
  ASSERT_EQ(report.variants[1].jobs.size(), 1u);
  EXPECT_EQ(report.variants[1].jobs[0].name(), "train");
  const VariantSummary& loss = report.variants[3];
  ASSERT_EQ(loss.jobs.size(), 2u);
  EXPECT_NEAR(loss.jobs[0].slowdown_mean(), 2.0, 0.02);
  EXPECT_NEAR(loss.jobs[1].slowdown_mean(), 1.0, 0.02);

  ASSERT_EQ(report.interference.size(), 2u);
  const v1::JobInterference& train = report.interference[0];
  EXPECT_EQ(train.job(), "train");
  EXPECT_NEAR(train.ratio(), 1.5, 1e-6);
  ASSERT_EQ(train.ratio_ci95_size(), 2);
  EXPECT_GT(train.ratio_ci95(0), 1.0);
  EXPECT_EQ(train.verdict(), "slower together");
  const v1::JobInterference& tenant = report.interference[1];
  EXPECT_EQ(tenant.verdict(), "no detectable difference");
  ASSERT_EQ(tenant.ratio_ci95_size(), 2);
  EXPECT_LT(tenant.ratio_ci95(0), 1.0);
  EXPECT_GT(tenant.ratio_ci95(1), 1.0);

  const v1::Results results = to_results(report);
  EXPECT_EQ(results.interference_size(), 2);
  EXPECT_EQ(results.variants(0).jobs_size(), 2);
  const std::string text = jobs_text(report);
  EXPECT_NE(text.find("train            alone 0.0404 s, together 0.0606 s: 1.500x"), std::string::npos) << text;
  EXPECT_NE(render_html(report, runs).find("<pre id=\"jobs\">Jobs: each job"), std::string::npos);
}

// A storm on the tenant's host slows the tenant (not a victim: the fault is its own) and the
// training job 1.5x at every repetition (a victim); a storm on the training job's host spares the
// tenant, which keeps its pace (spared, no victim).
TEST(JobResultsTest, SparedJobsThatSlowDownAreTheVictims) {
  std::vector<JobRanks> jobs = kJobs;
  jobs[0].faulted_in = {"storm-train"};
  jobs[1].faulted_in = {"storm-tenant"};
  std::vector<RunResult> runs;
  for (uint32_t rep = 0; rep < 3; ++rep) {
    const double wobble = 1 + 0.01 * rep;
    runs.push_back(run_of("baseline", rep, 40 * wobble, 10 * wobble));
    runs.push_back(run_of("storm-tenant", rep, 60 * wobble, 30 * wobble));
    runs.push_back(run_of("storm-train", rep, 80 * wobble, 10 * wobble));
    for (RunResult* r : {&runs[runs.size() - 2], &runs.back()}) r->faults.push_back({"storm", "pfc-storm", 1, 2, 0, 0});
  }
  const Report report = build_report("victims", runs, jobs);
  ASSERT_EQ(report.variants.size(), 3u);
  EXPECT_FALSE(report.variants[0].jobs[0].spared());  // no faults in the baseline: nobody spared
  const VariantSummary& tenant_storm = report.variants[1];
  ASSERT_EQ(tenant_storm.jobs.size(), 2u);
  EXPECT_TRUE(tenant_storm.jobs[0].spared());
  EXPECT_TRUE(tenant_storm.jobs[0].victim());
  EXPECT_FALSE(tenant_storm.jobs[1].spared());
  EXPECT_FALSE(tenant_storm.jobs[1].victim());  // slowed 3x, by its own fault
  const VariantSummary& train_storm = report.variants[2];
  EXPECT_TRUE(train_storm.jobs[1].spared());
  EXPECT_FALSE(train_storm.jobs[1].victim());

  const std::string text = jobs_text(report);
  EXPECT_NE(text.find("Victims: jobs that no fault of their variant acts on"), std::string::npos) << text;
  EXPECT_NE(text.find("storm-tenant               train            slowdown 1.500"), std::string::npos) << text;
  EXPECT_NE(text.find("storm-train                none: the jobs its faults spare kept within 10% of the baseline"),
            std::string::npos)
      << text;
  EXPECT_TRUE(to_results(report).variants(1).jobs(0).victim());
}

TEST(JobResultsTest, WithoutJobsTheReportHasNone) {
  const Report report = build_report("one", {run_of("baseline", 0, 40, 10)});
  EXPECT_TRUE(report.variants[0].jobs.empty());
  EXPECT_TRUE(report.interference.empty());
  EXPECT_EQ(jobs_text(report), "");
}

}  // namespace
}  // namespace collide::orchestrator::report
