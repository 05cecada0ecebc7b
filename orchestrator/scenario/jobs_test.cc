// Several jobs at once in a scenario: what loads, and what is refused at its line.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "orchestrator/scenario/jobs.h"
#include "orchestrator/scenario/scenario.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator {
namespace {

// Four virtual hosts of two ranks; a training job on hosts 0 and 2, an all-to-all on 1 and 3.
const std::string kTwoJobs = R"(name: tenants
testbed:
  virtual: {name: tn, hosts: 4, leaves: 2, spines: 1}
  ranks_per_host: 2
jobs:
  - name: train
    hosts: [0, 2]
    workload:
      collectives: {kind: all-reduce, bytes: 1MiB, count: 2}
  - name: tenant
    hosts: [1, 3]
    workload:
      collectives: {kind: all-to-all, bytes: 256KiB}
runs: {baseline: true, alone: true, repetitions: 2}
)";

class JobsScenarioTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() / ("collide-jobs-" + std::to_string(getpid()) + ".yaml")).string();
    std::ofstream(path_) << text;
    return path_;
  }
  // The scenario with `from` replaced by `to`, as loaded.
  Result<v1::Scenario> load_with(const std::string& from, const std::string& to) {
    std::string text = kTwoJobs;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return load_scenario(write(text));
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::string path_;
};

TEST_F(JobsScenarioTest, TwoJobsOnDisjointHostsLoadWithTheirOwnDefaults) {
  auto s = load_scenario(write(kTwoJobs));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ(s->jobs_size(), 2);
  EXPECT_EQ(s->jobs(1).workload().iterations(), 1u);
  EXPECT_EQ(s->jobs(1).workload().bytes_scale(), 1);
  EXPECT_TRUE(s->runs().alone());
  EXPECT_EQ(job_global_ranks(s->jobs(0), 2), (std::vector<uint32_t>{0, 1, 4, 5}));
  EXPECT_EQ(job_global_ranks(s->jobs(1), 2), (std::vector<uint32_t>{2, 3, 6, 7}));
  EXPECT_EQ(alone_variant("tenant"), "alone:tenant");
}

TEST(JobsTest, AVariantFaultsTheJobsOnWhoseHostsOrFabricItsFaultsAct) {
  v1::Scenario s;
  v1::Job& train = *s.add_jobs();
  train.set_name("train");
  train.add_hosts(0);
  train.add_hosts(1);
  v1::Job& tenant = *s.add_jobs();
  tenant.set_name("tenant");
  tenant.add_hosts(2);
  const auto fault = [&s](const std::string& name, const std::string& link) {
    v1::Fault& f = *s.add_faults();
    f.set_name(name);
    f.set_link(link);
  };
  fault("slow-h1", "h1.nic0");
  fault("storm-h2", "h2");
  fault("flap", "leaf0-spine1");
  const auto variant = [&s](const std::string& name, std::vector<std::string> faults) {
    v1::Variant& v = *s.mutable_runs()->add_variants();
    v.set_name(name);
    for (const std::string& f : faults) v.add_faults(f);
  };
  variant("slow", {"slow-h1"});
  variant("storm", {"storm-h2"});
  variant("flap", {"flap"});
  variant("clean", {});
  EXPECT_EQ(variants_faulting(s, train), (std::vector<std::string>{"slow", "flap"}));
  EXPECT_EQ(variants_faulting(s, tenant), (std::vector<std::string>{"storm", "flap"}));
}

TEST_F(JobsScenarioTest, AHostOfTwoJobsOrOutsideTheTestbedIsRefusedAtItsLine) {
  auto shared = load_with("hosts: [1, 3]", "hosts: [1, 2]");
  ASSERT_THAT(shared, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(shared.status().message(), path_ + ":11: jobs[1].hosts[1]: host 2 already runs job 'train'");
  auto outside = load_with("hosts: [1, 3]", "hosts: [1, 4]");
  ASSERT_THAT(outside, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(outside.status().message(), path_ + ":11: jobs[1].hosts[1]: host 4 is not in the testbed (hosts 0..3)");
  auto twice = load_with("hosts: [1, 3]", "hosts: [3, 3]");
  ASSERT_THAT(twice, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(twice.status().message().find("host 3 is listed twice"), std::string::npos) << twice.status().message();
}

TEST_F(JobsScenarioTest, AJobsWorkloadIsCheckedAsAScenariosIsAndNamedAsTheJobs) {
  auto no_size = load_with("{kind: all-to-all, bytes: 256KiB}", "{kind: all-to-all}");
  ASSERT_THAT(no_size, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(no_size.status().message(), path_ + ":13: jobs[1].workload.collectives: needs a kind and a size in bytes");
  // A synthesized job must fill its own hosts, not the testbed.
  auto synth = load_with("collectives: {kind: all-to-all, bytes: 256KiB}", "synth: {model: llama3-70b, tp: 2, pp: 1, dp: 4}");
  ASSERT_THAT(synth, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(synth.status().message().find("jobs[1].workload.synth: the job has tp 2 x pp 1 x dp 4 = 8 ranks but the "
                                          "testbed holds hosts x ranks_per_host = 4"),
            std::string::npos)
      << synth.status().message();
}

TEST_F(JobsScenarioTest, WhatCannotBeMeantIsRefused) {
  auto both = load_with("jobs:", "workload: {collectives: {kind: all-reduce, bytes: 1MiB}}\njobs:");
  ASSERT_THAT(both, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(both.status().message().find("workload: give either a workload or jobs, not both"), std::string::npos)
      << both.status().message();
  auto same_name = load_with("- name: tenant", "- name: train");
  ASSERT_THAT(same_name, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(same_name.status().message().find("jobs[1].name: 'train' is used twice"), std::string::npos);
  auto alone_alone = load_with("baseline: true, alone: true", "baseline: false, alone: true, variants: [{name: v}]");
  ASSERT_THAT(alone_alone, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(alone_alone.status().message().find("runs.alone: sets each job alone against all jobs together in the "
                                                "baseline: set runs.baseline"),
            std::string::npos)
      << alone_alone.status().message();
  auto taken = load_with("alone: true,", "alone: true, variants: [{name: 'alone:x'}],");
  ASSERT_THAT(taken, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(taken.status().message().find("names starting with 'alone:' are the runs of one job alone"),
            std::string::npos)
      << taken.status().message();
}

TEST_F(JobsScenarioTest, AloneWithoutJobsIsRefused) {
  auto s = load_scenario(write(R"(name: one
testbed: {virtual: {name: one, hosts: 2}, ranks_per_host: 1}
workload: {collectives: {kind: all-reduce, bytes: 1MiB}}
runs: {baseline: true, alone: true}
)"));
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find("runs.alone: runs each of several jobs by itself: it needs jobs"),
            std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace collide::orchestrator
