#include "orchestrator/scenario/switch_queues.h"

#include <gtest/gtest.h>

namespace collide::orchestrator {
namespace {

// A lossless-capable two-host testbed (priority 3, RoCE's default DSCP 26 on it) with a baseline.
v1::Scenario lossless_scenario() {
  v1::Scenario s;
  v1::VirtualTestbedSpec* bed = s.mutable_testbed()->mutable_virtual_();
  bed->set_hosts(2);
  bed->mutable_pfc()->set_lossless(true);
  s.mutable_runs()->set_baseline(true);
  return s;
}

TEST(SwitchQueuesTest, EveryFrameOnTheLosslessPriorityNeedsNoLossyQueue) {
  const v1::Scenario s = lossless_scenario();
  EXPECT_FALSE(has_lossy_traffic(s));
  const v1::VirtualTestbedSpec built = virtual_testbed_to_build(s);
  ASSERT_TRUE(built.pfc().has_lossy_queue());
  EXPECT_FALSE(built.pfc().lossy_queue());
}

TEST(SwitchQueuesTest, TrafficOffTheLosslessPriorityGetsALossyQueue) {
  {
    v1::Scenario s = lossless_scenario();
    v1::Job* job = s.add_jobs();
    job->set_dscp(0);  // best effort
    EXPECT_TRUE(has_lossy_traffic(s));
    EXPECT_TRUE(virtual_testbed_to_build(s).pfc().lossy_queue());
  }
  {
    v1::Scenario s = lossless_scenario();
    s.add_jobs()->set_dscp(27);  // another DSCP of priority 3: lossless too
    EXPECT_FALSE(has_lossy_traffic(s));
  }
  {
    v1::Scenario s = lossless_scenario();
    s.mutable_runs()->set_baseline(false);
    s.mutable_runs()->add_variants()->mutable_transport()->set_dscp(46);  // a variant's own class
    EXPECT_TRUE(has_lossy_traffic(s));
  }
  {
    v1::Scenario s = lossless_scenario();
    s.mutable_transport()->set_dscp(34);  // priority 4, but only the baseline's...
    s.mutable_testbed()->mutable_virtual_()->mutable_pfc()->set_priority(4);  // ...and it is lossless
    EXPECT_FALSE(has_lossy_traffic(s));
  }
  {
    v1::Scenario s = lossless_scenario();  // BGP's and BFD's CS6
    s.mutable_testbed()->mutable_virtual_()->set_routing(v1::VirtualTestbedSpec::ROUTING_BGP);
    EXPECT_TRUE(has_lossy_traffic(s));
  }
}

TEST(SwitchQueuesTest, TheScenarioSettingWins) {
  v1::Scenario s = lossless_scenario();
  s.mutable_testbed()->mutable_virtual_()->mutable_pfc()->set_lossy_queue(true);
  EXPECT_TRUE(virtual_testbed_to_build(s).pfc().lossy_queue());
  s.add_jobs()->set_dscp(0);
  s.mutable_testbed()->mutable_virtual_()->mutable_pfc()->set_lossy_queue(false);
  EXPECT_FALSE(virtual_testbed_to_build(s).pfc().lossy_queue());
  // No pfc settings: nothing to decide.
  v1::Scenario plain;
  plain.mutable_testbed()->mutable_virtual_()->set_hosts(2);
  EXPECT_FALSE(virtual_testbed_to_build(plain).has_pfc());
}

}  // namespace
}  // namespace collide::orchestrator
