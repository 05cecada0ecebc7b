#include "orchestrator/scenario/scenario.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/all_reduce_trace.h"
#include "tests/support/status_matchers.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

class ScenarioTest : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = (std::filesystem::temp_directory_path() /
             ("collide-scenario-" + std::to_string(getpid()) + ".yaml")).string();
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::string path_;
};

TEST_F(ScenarioTest, EveryScenarioInConfigsLoads) {
  int loaded = 0;
  // configs/ and its scenario folders (models/ and deploy/ hold no scenarios).
  for (const char* dir : {"", "/fabric"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(COLLIDE_CONFIGS_DIR) + dir)) {
      if (entry.path().extension() != ".yaml") continue;
      auto s = load_scenario(entry.path().string());
      EXPECT_TRUE(s.ok()) << entry.path() << ": " << s.status().to_string();
      ++loaded;
    }
  }
  EXPECT_GE(loaded, 4);
}

TEST_F(ScenarioTest, VariantsChooseTheFabricsLoadBalancing) {
  auto s = load_scenario(std::string(COLLIDE_CONFIGS_DIR) + "/fabric/ecmp-polarization.yaml");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->testbed().virtual_().load_balancing(), v1::VirtualTestbedSpec::LOAD_BALANCING_ECMP);
  ASSERT_EQ(s->runs().variants_size(), 4);
  EXPECT_FALSE(s->runs().variants(0).has_load_balancing());
  EXPECT_EQ(s->runs().variants(1).transport().qps_per_connection(), 8u);
  EXPECT_EQ(s->runs().variants(2).load_balancing(), v1::VirtualTestbedSpec::LOAD_BALANCING_QP_HASH);
  EXPECT_EQ(s->runs().variants(3).load_balancing(), v1::VirtualTestbedSpec::LOAD_BALANCING_SPRAY);
  EXPECT_EQ(s->transport().recovery(), v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT);
}

// Two real hosts, one rank each: the first 9 lines of the scenarios below that use it.
const std::string kTwoRealHosts = R"(name: real
testbed:
  agents:
    - {address: "10.0.0.1:7411", host: 0, interfaces: [eth1]}
    - {address: "10.0.0.2:7411", host: 1, interfaces: [eth1]}
  ranks_per_host: 1
  port: af_packet
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
)";

// A virtual fabric of three leaves and two spines whose spine0 sends host 0's traffic to leaf1.
const std::string kRerouted = R"(name: rerouted
testbed:
  virtual:
    hosts: 3
    leaves: 3
    spines: 2
    routes:
      - {on: spine0, to_host: 0, via: leaf1}
      - {on: leaf1, to_host: 0, via: spine3}
  ranks_per_host: 1
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
)";

TEST_F(ScenarioTest, ASwitchRouteToANeighbourThatIsNotThereIsRefusedWithItsLine) {
  const std::string path = write(kRerouted);
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":9: testbed.virtual.routes[1].via: no switch 'spine3'"),
            std::string::npos)
      << s.status().message();

  std::string fixed = kRerouted;
  fixed.replace(fixed.find("spine3"), 6, "spine1");
  auto ok = load_scenario(write(fixed + "runs: {baseline: true}\n"));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->testbed().virtual_().routes_size(), 2);
  EXPECT_EQ(ok->testbed().virtual_().routes(1).via(), "spine1");

  auto sprayed = load_scenario(write(fixed + R"(runs:
  variants:
    - name: sprayed
      load_balancing: spray
)"));
  ASSERT_THAT(sprayed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(sprayed.status().message().find("runs.variants[0].load_balancing: testbed.virtual.routes need ecmp"),
            std::string::npos)
      << sprayed.status().message();
}

TEST_F(ScenarioTest, RealTestbedRefusesAVariantsLoadBalancingWithFileLineAndField) {
  const std::string path = write(kTwoRealHosts + R"(runs:
  variants:
    - name: sprayed
      load_balancing: spray
)");
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":13: runs.variants[0].load_balancing: chooses a "
                                             "virtual testbed's balancing"),
            std::string::npos)
      << s.status().message();
}

TEST_F(ScenarioTest, RealTestbedNeedsEveryHostsLeafForATopologyRingOrder) {
  const std::string path = write(kTwoRealHosts + R"(runs:
  variants:
    - name: grouped
      transport:
        ring_order: topology
)");
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":14: runs.variants[0].transport.ring_order: topology "
                                             "needs the leaf of every host: give testbed.agents[0] a leaf"),
            std::string::npos)
      << s.status().message();

  // The same hosts, each with its leaf.
  std::string with_leaves = kTwoRealHosts;
  const auto first = with_leaves.find("interfaces: [eth1]}");
  with_leaves.replace(first, 19, "interfaces: [eth1], leaf: 0}");
  const auto second = with_leaves.find("interfaces: [eth1]}");
  with_leaves.replace(second, 19, "interfaces: [eth1], leaf: 1}");
  auto ok = load_scenario(write(with_leaves + R"(transport:
  ring_order: topology
runs:
  baseline: true
)"));
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->transport().ring_order(), v1::TransportSettings::RING_ORDER_TOPOLOGY);
  EXPECT_EQ(ok->testbed().agents(1).leaf(), 1u);
}

TEST_F(ScenarioTest, DemoHasItsDefaultsAndVariants) {
  auto s = load_scenario(std::string(COLLIDE_CONFIGS_DIR) + "/demo.yaml");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->testbed().virtual_().hosts(), 4u);
  EXPECT_EQ(s->testbed().ranks_per_host(), 2u);
  EXPECT_TRUE(s->workload().has_synth());
  EXPECT_EQ(s->faults(0).kind(), v1::Fault::KIND_LOSS);
  EXPECT_EQ(s->faults(0).link(), "leaf0-spine1");
  EXPECT_DOUBLE_EQ(s->faults(0).probability(), 0.01);
  EXPECT_EQ(s->faults(0).direction(), v1::Fault::DIRECTION_BOTH);
  EXPECT_EQ(s->faults(1).kind(), v1::Fault::KIND_LINK_FLAP);
  EXPECT_EQ(s->faults(1).duration_ns(), 200'000'000u);
  EXPECT_EQ(s->faults(2).kind(), v1::Fault::KIND_SLOW_RECEIVER);
  ASSERT_EQ(s->runs().variants_size(), 4);
  EXPECT_EQ(s->runs().variants(1).transport().recovery(),
            v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT);
  EXPECT_EQ(s->outputs().directory(), "collide-results/demo");
}

TEST_F(ScenarioTest, SemanticErrorsNameFileLineAndField) {
  const std::string path = write(R"(name: bad
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
faults:
  - name: f
    kind: loss
    link: h9
    probability: 1%
runs:
  baseline: true
)");
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":7: faults[0].link: no link 'h9'"), std::string::npos)
      << s.status().message();
}

TEST_F(ScenarioTest, FaultOnANicTheHostsDoNotHaveNamesFileLineAndNics) {
  std::string yaml = R"(name: rails
testbed:
  virtual: {hosts: 2, nics_per_host: 4, leaves: 4, spines: 1}
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
faults:
  - name: f
    kind: loss
    link: h1.nic4
    probability: 1%
runs:
  baseline: true
)";
  const std::string path = write(yaml);
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":9: faults[0].link: no link 'h1.nic4': host 1's NICs are nic0..nic3"),
            std::string::npos)
      << s.status().message();
  auto fixed = load_scenario(write(yaml.replace(yaml.find("h1.nic4"), 7, "h1.nic3")));
  EXPECT_TRUE(fixed.ok()) << fixed.status().to_string();
}

TEST_F(ScenarioTest, RejectsWhatCannotRun) {
  auto msg = [&](const std::string& yaml) {
    auto s = load_scenario(write(yaml));
    return s.ok() ? std::string("ok") : s.status().message();
  };
  EXPECT_NE(msg("name: x\nworkload: {}\nruns: {baseline: true}\n").find("exactly one of trace, synth (or synth_model) or collectives"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n").find("nothing to run"), std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\nruns: {baseline: true, variants: [{name: v, "
                "faults: [nope]}]}\n")
                .find("no fault named 'nope'"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\nruns: {baseline: true}\nfaults: [{name: a, kind: "
                "loss, link: h0, probability: 150%}]\n")
                .find("within 0..1"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\nruns: {baseline: true}\ntestbed: {virtual: "
                "{spines: 2}}\nfaults: [{name: a, kind: link-flap, link: leaf0-spine1}]\n")
                .find("needs a duration"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\nruns: {baseline: true}\ntestbed: {virtual: "
                "{hosts: 2, leaves: 2, spines: 0}}\n")
                .find("testbed.virtual"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\nruns: {baseline: true}\n"
                "testbed: {virtual: {spines: 2}}\nfaults: [{name: a, kind: slow-receiver, link: leaf0-spine1, "
                "duration_ns: 1s}]\n")
                .find("acts on a host"),
            std::string::npos);
  EXPECT_NE(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\nruns: {baseline: true}\n"
                "faults: [{name: a, kind: slow-receiver, link: h1}]\n")
                .find("slow receiver needs a duration"),
            std::string::npos);
  EXPECT_EQ(msg("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\nruns: {baseline: true}\n"), "ok");
}

TEST_F(ScenarioTest, RecurringFaultsReadTheirMtbfAndNeedARepairTimeAndNamesWithoutTheOccurrenceMark) {
  const std::string head = "name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n"
                           "testbed: {virtual: {spines: 2}}\nruns: {baseline: true}\n";
  auto s = load_scenario(write(head + "faults: [{name: f, kind: link-flap, link: leaf0-spine1, mtbf_ns: 90s, "
                                      "duration_ns: 200ms}]\n"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->faults(0).mtbf_ns(), 90'000'000'000u);
  auto msg = [&](const std::string& faults) {
    auto r = load_scenario(write(head + "faults: [" + faults + "]\n"));
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_NE(msg("{name: f, kind: loss, link: h0, probability: 1%, mtbf_ns: 10s}")
                .find("faults[0].duration_ns: a recurring fault (mtbf_ns) needs a duration"),
            std::string::npos);
  EXPECT_NE(msg("{name: 'f#1', kind: loss, link: h0, probability: 1%}").find("faults[0].name: 'f#1'"),
            std::string::npos);
  EXPECT_NE(msg("{name: f, kind: loss, link: h0, probability: 1%, mtbf_ns: 1 fortnight, duration_ns: 1s}")
                .find("mtbf_ns"),
            std::string::npos);
}

TEST_F(ScenarioTest, ALinkFailuresPhasesBelongToAFlapOfAFabricLinkAndEndWithinIt) {
  const std::string head = "name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n"
                           "testbed: {virtual: {spines: 2}}\nruns: {baseline: true}\n";
  auto s = load_scenario(write(head + "faults: [{name: f, kind: link-flap, link: leaf0-spine1, duration_ns: 3s, "
                                      "detection_ns: 50ms, convergence_ns: 2s}]\n"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->faults(0).detection_ns(), 50'000'000u);
  ASSERT_TRUE(s->faults(0).has_convergence_ns());
  EXPECT_EQ(s->faults(0).convergence_ns(), 2'000'000'000u);
  auto msg = [&](const std::string& faults) {
    auto r = load_scenario(write(head + "faults: [" + faults + "]\n"));
    return r.ok() ? std::string("ok") : r.status().message();
  };
  // Converging at once is a phase too (0 is not "unset").
  EXPECT_EQ(msg("{name: f, kind: link-flap, link: leaf0-spine1, duration_ns: 1s, convergence_ns: 0}"), "ok");
  EXPECT_NE(msg("{name: f, kind: link-flap, link: h1, duration_ns: 1s, detection_ns: 50ms}")
                .find("faults[0].detection_ns: the phases of a link failure"),
            std::string::npos);
  EXPECT_NE(msg("{name: f, kind: blackhole, link: leaf0-spine1, duration_ns: 1s, convergence_ns: 1s}")
                .find("faults[0].convergence_ns: the phases of a link failure"),
            std::string::npos);
  EXPECT_NE(msg("{name: f, kind: link-flap, link: leaf0-spine1, duration_ns: 1s, detection_ns: 1s}")
                .find("faults[0].detection_ns: detection must end within"),
            std::string::npos);
  EXPECT_NE(msg("{name: a/b, kind: link-flap, link: leaf0-spine1, duration_ns: 1s}").find("faults[0].name: 'a/b'"),
            std::string::npos);
}

TEST_F(ScenarioTest, AFabricRoutedByBgpTakesItsTimersAndLeavesDetectionAndConvergenceToThem) {
  const std::string head = "name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n"
                           "testbed: {virtual: {hosts: 4, spines: 2, routing: bgp, "
                           "bgp: {bfd_interval_ns: 100ms, bfd_multiplier: 3}}}\nruns: {baseline: true}\n";
  auto s = load_scenario(write(head + "faults: [{name: f, kind: blackhole, link: leaf0-spine1, duration_ns: 3s}]\n"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->testbed().virtual_().routing(), v1::VirtualTestbedSpec::ROUTING_BGP);
  EXPECT_EQ(s->testbed().virtual_().bgp().bfd_interval_ns(), 100'000'000u);
  auto phases = load_scenario(write(head + "faults: [{name: f, kind: link-flap, link: leaf0-spine1, duration_ns: 3s, "
                                           "detection_ns: 50ms}]\n"));
  ASSERT_FALSE(phases.ok());
  EXPECT_NE(phases.status().message().find("faults[0].detection_ns: with routing: bgp"), std::string::npos)
      << phases.status().message();
  auto bad_timer = load_scenario(write("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n"
                                       "testbed: {virtual: {hosts: 4, spines: 2, routing: bgp, "
                                       "bgp: {bfd_interval_ns: 1500us}}}\nruns: {baseline: true}\n"));
  ASSERT_FALSE(bad_timer.ok());
  EXPECT_NE(bad_timer.status().message().find("bgp.bfd_interval_ns"), std::string::npos) << bad_timer.status().message();
}

TEST_F(ScenarioTest, APodsSpineToSuperSpineLinkCanBeFaultedAndOnlyItsOwnLinksAreNamed) {
  const std::string head = "name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n"
                           "testbed: {virtual: {hosts: 4, leaves: 4, spines: 4, pods: 2, super_spines: 2}}\n"
                           "runs: {baseline: true}\n";
  auto msg = [&](const std::string& faults) {
    auto r = load_scenario(write(head + "faults: [" + faults + "]\n"));
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(msg("{name: f, kind: loss, link: spine3-super1, probability: 1%}"), "ok");
  EXPECT_EQ(msg("{name: f, kind: link-flap, link: leaf2-spine3, duration_ns: 1s}"), "ok");
  // Leaf 0 (pod 0) is cabled to spines 0 and 1 only; there is no third super-spine.
  EXPECT_NE(msg("{name: f, kind: loss, link: leaf0-spine3, probability: 1%}").find("no link 'leaf0-spine3'"),
            std::string::npos);
  EXPECT_NE(msg("{name: f, kind: loss, link: spine0-super2, probability: 1%}").find("no link 'spine0-super2'"),
            std::string::npos);
  EXPECT_NE(msg("{name: f, kind: link-flap, link: leaf0-spine1, duration_ns: 1s, detection_ns: 50ms}")
                .find("not with pods yet"),
            std::string::npos);
}

// A small dense model on the 4 x 2 testbed of the demo: tp 2, pp 2, dp 2 fills it.
constexpr const char* kSynthScenario = R"(name: synth
testbed:
  virtual: {hosts: 4, leaves: 2, spines: 2}
  ranks_per_host: 2
workload:
  synth:
    model: llama3-70b
    tp: 2
    pp: 2
    dp: 2
    layers: 4
    global_batch: 4
runs: {baseline: true}
)";

TEST_F(ScenarioTest, PfcStormsTakeTheLosslessPriorityByDefaultAndRefuseWhatCannotBeSent) {
  const std::string head = "name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n"
                           "testbed: {virtual: {spines: 1, pfc: {priority: 5}}}\n";
  auto s = load_scenario(write(head + "runs: {baseline: true}\nfaults: [{name: st, kind: pfc-storm, link: h0, duration_ns: 100ms}]\n"));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ(s->faults(0).kind(), v1::Fault::KIND_PFC_STORM);
  ASSERT_EQ(s->faults(0).pfc_priorities_size(), 1);
  EXPECT_EQ(s->faults(0).pfc_priorities(0), 5u);  // the testbed's lossless class

  auto msg = [&](const std::string& faults, const std::string& runs = "runs: {baseline: true}\n") {
    auto r = load_scenario(write(head + runs + "faults: [" + faults + "]\n"));
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_NE(msg("{name: st, kind: pfc-storm, link: h0}").find("faults[0].duration_ns: a PFC storm needs a duration"),
            std::string::npos);
  EXPECT_NE(msg("{name: st, kind: pfc-storm, link: h0, duration_ns: 1s, pfc_priorities: [3, 9]}")
                .find("faults[0].pfc_priorities: priority 9 is not 0-7"),
            std::string::npos);
  EXPECT_NE(msg("{name: st, kind: pfc-storm, link: h0, duration_ns: 1s, pfc_quanta: 65536}").find("faults[0].pfc_quanta"),
            std::string::npos);
  EXPECT_NE(msg("{name: st, kind: pfc-storm, link: h0, duration_ns: 1s, pfc_frames_per_second: 1e9}")
                .find("faults[0].pfc_frames_per_second"),
            std::string::npos);
  EXPECT_EQ(msg("{name: st, kind: pfc-storm, link: leaf0-spine0, duration_ns: 1s}"), "ok");
  // A variant can turn off a watchdog the testbed has, not one it lacks.
  EXPECT_NE(msg("{name: st, kind: pfc-storm, link: h0, duration_ns: 1s}",
                "runs: {variants: [{name: v, faults: [st], pfc_watchdog: true}]}\n")
                .find("runs.variants[0].pfc_watchdog: there is no watchdog"),
            std::string::npos);
  EXPECT_EQ(msg("{name: st, kind: pfc-storm, link: h0, duration_ns: 1s}",
                "runs: {variants: [{name: v, faults: [st], pfc_watchdog: false}]}\n"),
            "ok");
}

// Lossless mode holds the lossless priority's queue only: RoCE's DSCP must map to it (DSCP / 8).
TEST_F(ScenarioTest, LosslessRunsNeedRoceOnTheLosslessPriority) {
  auto msg = [&](const std::string& pfc, const std::string& transport, const std::string& runs) {
    auto r = load_scenario(write("name: x\nworkload: {collectives: {kind: all-reduce, bytes: 1MiB}}\n"
                                 "testbed: {virtual: {spines: 1, host_link_gbps: 1, fabric_link_gbps: 1, pfc: {" +
                                 pfc + "}}}\n" + transport + runs));
    return r.ok() ? std::string("ok") : r.status().message();
  };
  const std::string baseline = "runs: {baseline: true}\n";
  EXPECT_EQ(msg("lossless: true", "", baseline), "ok");  // DSCP 26 by default: priority 3
  EXPECT_NE(msg("lossless: true, priority: 4", "", baseline)
                .find("transport.dscp: DSCP 26 rides priority 3, not the lossless priority 4"),
            std::string::npos);
  EXPECT_EQ(msg("lossless: true, priority: 4", "transport: {dscp: 34}\n", baseline), "ok");
  EXPECT_EQ(msg("lossless: false", "transport: {dscp: 0}\n", baseline), "ok");  // lossy: any class
  // A variant that turns lossless mode on is judged with its own transport over the scenario's.
  EXPECT_NE(msg("lossless: false", "transport: {dscp: 0}\n", "runs: {variants: [{name: v, lossless: true}]}\n")
                .find("transport.dscp: DSCP 0 rides priority 0"),
            std::string::npos);
  EXPECT_NE(msg("lossless: true", "", "runs: {variants: [{name: v, transport: {dscp: 46}}]}\n")
                .find("runs.variants[0].transport.dscp: DSCP 46 rides priority 5"),
            std::string::npos);
  EXPECT_EQ(msg("lossless: true", "transport: {dscp: 0}\n", "runs: {variants: [{name: v, lossless: false}]}\n"), "ok");
  // A job may ride a class of its own (lossy beside the lossless one), a real DSCP only.
  const std::string jobs = "jobs: [{name: a, hosts: [0], dscp: DSCP, workload: {collectives: {kind: all-reduce, "
                           "bytes: 1MiB}}}, {name: b, hosts: [1], workload: {collectives: {kind: all-reduce, "
                           "bytes: 1MiB}}}]\n";
  const auto with_jobs = [&](const std::string& dscp) {
    std::string text = "name: x\ntestbed: {virtual: {spines: 1, host_link_gbps: 1, fabric_link_gbps: 1, pfc: {lossless: "
                       "true}}}\nruns: {baseline: true}\n" + jobs;
    text.replace(text.find("DSCP"), 4, dscp);
    auto r = load_scenario(write(text));
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(with_jobs("0"), "ok");
  EXPECT_NE(with_jobs("64").find("jobs[0].dscp: 64 is not a DSCP (0-63)"), std::string::npos) << with_jobs("64");
  // Switch ports with a lossy queue queue per priority: no rate limit goes under them. With every
  // frame on the lossless priority they keep one queue, and a rate limit goes under it.
  const std::string rate_limit = "faults: [{name: rl, kind: rate-limit, link: h0, rate_gbps: 1}]\n";
  const std::string limited = "runs: {variants: [{name: v, faults: [rl]}]}\n";
  EXPECT_EQ(msg("lossless: false", rate_limit, limited), "ok");
  EXPECT_NE(msg("lossless: false, lossy_queue: true", rate_limit, limited)
                .find("faults[0].kind: a rate limit is not available yet on a testbed whose switch ports have a "
                      "queue per priority"),
            std::string::npos);
  EXPECT_NE(msg("lossless: false", "transport: {dscp: 0}\n" + rate_limit, limited)
                .find("faults[0].kind: a rate limit is not available yet"),
            std::string::npos);
}

TEST_F(ScenarioTest, SynthesizedWorkloadResolvesThePresetAndFitsTheTestbed) {
  auto s = load_scenario(write(kSynthScenario));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(std::filesystem::path(s->workload().synth().model()).is_absolute());
  EXPECT_NE(s->workload().synth().model().find("llama3-70b.yaml"), std::string::npos);
}

TEST_F(ScenarioTest, SynthesizedWorkloadOfTheWrongSizeNamesLineAndField) {
  std::string yaml = kSynthScenario;
  yaml.replace(yaml.find("dp: 2"), 5, "dp: 4");
  const std::string path = write(yaml);
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":6: workload.synth: the job has tp 2 x pp 2 x dp 4 = "
                                      "16 ranks but the testbed holds hosts x ranks_per_host = 8"),
            std::string::npos)
      << s.status().message();
}

TEST_F(ScenarioTest, SynthesizedWorkloadWithAnUnknownModelNamesIt) {
  std::string yaml = kSynthScenario;
  yaml.replace(yaml.find("llama3-70b"), 10, "no-such-model");
  const std::string path = write(yaml);
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":7: workload.synth.model: no model spec 'no-such-model'"),
            std::string::npos)
      << s.status().message();
}

TEST_F(ScenarioTest, SynthesizedWorkloadWithABadOverrideNamesTheSpec) {
  std::string yaml = kSynthScenario;
  yaml.replace(yaml.find("tp: 2"), 5, "tp: 3");  // 64 heads are not divisible by 3
  yaml.replace(yaml.find("dp: 2"), 5, "dp: 1");
  auto s = load_scenario(write(yaml));
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find("workload.synth.model"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("tp"), std::string::npos) << s.status().message();
}

TEST_F(ScenarioTest, DamagedTraceIsRefusedWithItsPlace) {
  const auto trace = std::filesystem::temp_directory_path() /
                     ("collide-scenario-" + std::to_string(getpid()) + ".trace");
  testing::write_all_reduce_trace(trace.string(), 4, 1 << 20, /*declare_comm=*/true);
  const std::string yaml = "name: t\nworkload:\n  trace: " + trace.string() + "\nruns: {baseline: true}\n";
  auto good = load_scenario(write(yaml));
  EXPECT_TRUE(good.ok()) << good.status().to_string();
  // Cut the last record in half.
  std::filesystem::resize_file(trace, std::filesystem::file_size(trace) - 5);
  auto bad = load_scenario(write(yaml));
  std::filesystem::remove(trace);
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad.status().message().find(":3: workload.trace: "), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find(trace.string()), std::string::npos) << bad.status().message();
}

TEST_F(ScenarioTest, TraceOfAnotherSizeIsRefused) {
  const auto trace = std::filesystem::temp_directory_path() /
                     ("collide-scenario-size-" + std::to_string(getpid()) + ".trace");
  v1::TraceHeader header;
  header.set_world_size(16);
  auto w = traces::TraceWriter::create(trace.string(), header);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->close().ok());
  auto s = load_scenario(write("name: t\nworkload: {trace: " + trace.string() + "}\nruns: {baseline: true}\n"));
  std::filesystem::remove(trace);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find("has 16 ranks but the testbed holds hosts x ranks_per_host = 4"),
            std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace collide::orchestrator

namespace collide::orchestrator {
namespace {

TEST_F(ScenarioTest, RealTestbedRefusesFabricLinkFaultsWithFileLineAndField) {
  const std::string path = write(kTwoRealHosts + R"(faults:
  - name: on-host
    kind: loss
    link: h1
    probability: 1%
  - name: on-switch
    kind: loss
    link: leaf0-spine1
    probability: 1%
runs:
  baseline: true
)");
  auto s = load_scenario(path);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.status().message().find(path + ":17: faults[1].link: 'leaf0-spine1' is a fabric"),
            std::string::npos)
      << s.status().message();
}

TEST_F(ScenarioTest, RealTestbedRefusesFaultsItsAgentsCannotPlay) {
  auto msg = [&](const std::string& port, const std::string& fault) {
    auto s = load_scenario(write(fmt::format(R"(name: real
testbed:
  agents:
    - {{address: "10.0.0.1:7411", host: 0, interfaces: [eth1]}}
    - {{address: "10.0.0.2:7411", host: 1, interfaces: [eth1]}}
  ranks_per_host: 1
  port: {}
workload:
  collectives: {{kind: all-reduce, bytes: 1MiB}}
faults:
  - {}
runs:
  baseline: true
)", port, fault)));
    return s.ok() ? std::string("ok") : s.status().message();
  };
  EXPECT_NE(msg("af_packet", "{name: f, kind: loss, link: h1, direction: from-host, probability: 1%}")
                .find(":11: faults[0].direction: on a real host only frames arriving"),
            std::string::npos);
  EXPECT_NE(msg("af_xdp", "{name: f, kind: loss, link: h1, probability: 1%}").find("testbed.port"),
            std::string::npos);
  EXPECT_NE(msg("af_packet", "{name: f, kind: rate-limit, link: h1, rate_gbps: 1}").find("faults[0].kind"),
            std::string::npos);
  EXPECT_EQ(msg("af_xdp", "{name: f, kind: link-flap, link: h1, duration_ns: 100ms}"), "ok");
  EXPECT_EQ(msg("af_packet", "{name: f, kind: loss, link: h1, direction: to-host, probability: 1%}"), "ok");
}

TEST_F(ScenarioTest, RealTestbedTakesHostLinkFaults) {
  auto s = load_scenario(write(kTwoRealHosts + R"(faults:
  - {name: on-host, kind: loss, link: h1, probability: 1%}
runs:
  baseline: true
)"));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->testbed().agents(1).interfaces(0), "eth1");
}

TEST_F(ScenarioTest, PortProfilesTakeUnitsAndAFaultyOneNamesItsLine) {
  std::string yaml = R"(name: ports
testbed:
  virtual:
    hosts: 2
    host_link_gbps: 1
    leaf_down:
      gbps: 0.5
      buffer_bytes: 200KB
      ecn:
        kmin_bytes: 20KiB
        kmax_bytes: 300KB
        pmax: 20%
workload: {collectives: {kind: all-reduce, bytes: 1MiB}}
runs: {baseline: true}
)";
  const std::string path = write(yaml);
  auto bad = load_scenario(path);
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad.status().message().find(path + ":11: testbed.virtual.leaf_down.ecn.kmax_bytes: kmax 300000 is "
                                        "beyond the buffer (200000 bytes)"),
            std::string::npos)
      << bad.status().message();
  auto good = load_scenario(write(yaml.replace(yaml.find("300KB"), 5, "100KB")));
  ASSERT_TRUE(good.ok()) << good.status().to_string();
  const v1::PortProfile& p = good->testbed().virtual_().leaf_down();
  EXPECT_EQ(p.buffer_bytes(), 200000u);
  EXPECT_EQ(p.ecn().kmin_bytes(), 20480u);
  EXPECT_DOUBLE_EQ(p.ecn().pmax(), 0.2);
}

}  // namespace
}  // namespace collide::orchestrator

namespace collide::orchestrator {
namespace {

TEST_F(ScenarioTest, IncastAndTheOutOfOrderModeLoadAndTooFewRanksAreRefusedAtTheirLine) {
  std::string yaml = R"(name: incast
testbed:
  virtual: {hosts: 4, leaves: 2, spines: 2}
  ranks_per_host: 2
workload:
  incast:
    senders: 7
    bytes: 1MiB
transport:
  recovery: out-of-order
  reorder_window_ns: 50us
runs:
  baseline: true
)";
  const std::string path = write(yaml);
  auto s = load_scenario(path);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->workload().incast().senders(), 7u);
  EXPECT_EQ(s->workload().incast().bytes(), 1u << 20);
  EXPECT_EQ(s->transport().recovery(), v1::TransportSettings::RECOVERY_OUT_OF_ORDER);
  EXPECT_EQ(s->transport().reorder_window_ns(), 50'000u);

  auto refused = load_scenario(write(yaml.replace(yaml.find("senders: 7"), 10, "senders: 8")));
  ASSERT_THAT(refused, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(refused.status().message().find(
                ":7: workload.incast.senders: 8 senders and a receiver need 9 ranks, but the job has 8"),
            std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace collide::orchestrator
