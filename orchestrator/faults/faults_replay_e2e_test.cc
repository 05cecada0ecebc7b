// The faults of testdata/fabric_faults.yaml played against real replays on a virtual leaf-spine
// testbed, driven directly (one `collide replay` per host, as an agent runs it, and arm_faults()
// as the host's agent arms it): a flap longer than the transport's timeouts and retries fails the
// job with NCCL's error, a shorter one stalls the op in flight for about its length, loss on one
// spine link is counted by the injector and slows the job, and a slow receiver stalls it.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "orchestrator/faults/armed_faults.h"
#include "orchestrator/run/workload.h"
#include "orchestrator/scenario/scenario.h"
#include "orchestrator/testbed/virtual_testbed.h"
#include "tests/support/privileged.h"

namespace collide::orchestrator::faults {
namespace {

using namespace std::chrono_literals;

struct Outcome {
  static Outcome error(std::string why) {
    Outcome o;
    o.ok = false;
    o.failure = std::move(why);
    return o;
  }
  bool ok = true;
  std::string failure;
  std::vector<double> op_ms;  // per op index: the slowest rank's duration
  std::vector<uint64_t> op_ends_ns;  // when each op of each rank ended
  double jct_ms = 0;
  uint64_t retransmitted = 0;
  std::vector<report::FaultWindow> truth;
};

class FaultsReplayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::missing_netns().empty() || !testing::missing_bpf().empty() ||
        !testing::missing_tool("ethtool").empty()) {
      return;
    }
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("collide-faults-replay-" + std::to_string(getpid())));
    std::filesystem::create_directories(*dir_);
    auto s = load_scenario(std::string(COLLIDE_FAULTS_TESTDATA) + "/fabric_faults.yaml");
    if (!s.ok()) {
      setup_error_ = new std::string(s.status().to_string());
      return;
    }
    scenario_ = new v1::Scenario(*s);
    (void)testbed::remove_testbed(scenario_->testbed().virtual_().name());
    auto plan = testbed::plan_testbed(scenario_->testbed().virtual_());
    auto bed = plan.ok() ? testbed::VirtualTestbed::create(*plan)
                         : Result<std::unique_ptr<testbed::VirtualTestbed>>(plan.status());
    if (!bed.ok()) {
      setup_error_ = new std::string(bed.status().to_string());
      return;
    }
    bed_ = std::move(bed).value().release();
    auto trace = prepare_workload(*scenario_, 2, *dir_);
    if (!trace.ok()) {
      setup_error_ = new std::string(trace.status().to_string());
      return;
    }
    trace_ = new std::string(*trace);
  }
  static void TearDownTestSuite() {
    delete bed_;  // the testbed goes, and with it every namespace
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete dir_;
    delete scenario_;
    delete trace_;
    delete setup_error_;
  }
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    COLLIDE_REQUIRE(testing::missing_bpf());
    COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
    ASSERT_EQ(setup_error_, nullptr) << *setup_error_;
  }

  // Runs one variant of the scenario ("baseline" for none) and reads what the replays recorded.
  static Outcome run(const std::string& name) {
    v1::TransportSettings t = scenario_->transport();
    std::vector<const v1::Fault*> faults;
    for (const v1::Variant& v : scenario_->runs().variants()) {
      if (v.name() != name) continue;
      t.MergeFrom(v.transport());
      for (const std::string& f : v.faults()) {
        for (const v1::Fault& g : scenario_->faults()) {
          if (g.name() == f) faults.push_back(&g);
        }
      }
    }
    const testbed::TestbedPlan& plan = bed_->plan();
    const std::string go = (*dir_ / (name + ".go")).string();
    std::vector<process::ChildProcess> replays;
    std::vector<std::string> files;
    Outcome out;
    for (uint32_t h = 0; h < 2; ++h) {
      const testbed::HostNic& nic = plan.nics[h];
      files.push_back((*dir_ / fmt::format("{}-{}.json", name, h)).string());
      std::vector<std::string> argv = {
          COLLIDE_BIN, "--log-level=warn", "replay", *trace_, "--ranks=" + std::to_string(h),
          "--ranks-per-host=1",
          "--port=dpdk:net_af_xdp" + std::to_string(h) + ",iface=" + nic.ifname,
          "--netns=" + nic.netns, "--lcore=" + std::to_string(h % 2), "--rank-addresses=testbed",
          "--next-hop-mac=" + nic.gateway_mac, "--mtu=" + std::to_string(t.mtu_bytes()),
          "--recovery=go-back-n", "--channels=" + std::to_string(t.channels()),
          "--qps=" + std::to_string(t.qps_per_connection()),
          "--timeout-exponent=" + std::to_string(t.timeout_exponent()),
          "--retry-count=" + std::to_string(t.retry_count()), "--max-outstanding=256",
          "--results=" + files.back(), "--wait-for-file=" + go,
          // A failed job leaves the peer waiting for data that never comes, as NCCL would.
          "--timeout=15"};
      for (std::string& flag : replayer_hook_flags(faults, h)) argv.push_back(flag);
      auto child = process::ChildProcess::spawn(argv);
      if (!child.ok()) return Outcome::error(child.status().to_string());
      replays.push_back(std::move(child).value());
    }
    for (auto& r : replays) {
      auto line = r.read_line(60s);
      if (!line.ok() || line->rfind("ready", 0) != 0) {
        return Outcome::error("a replay did not start: " +
                              (line.ok() ? *line : line.status().to_string()));
      }
    }
    auto armed = arm_faults(faults, plan, {});
    if (!armed.ok()) return Outcome::error(armed.status().to_string());
    std::ofstream(go).close();
    for (auto& r : replays) (void)r.wait(90s);
    (*armed)->disarm();
    out.truth = (*armed)->ground_truth();
    std::map<uint64_t, double> by_op;
    uint64_t first = ~0ull, last = 0;
    for (const std::string& file : files) {
      std::ifstream in(file);
      const auto j = nlohmann::json::parse(in, nullptr, false);
      if (j.is_discarded()) return Outcome::error(file + ": no results");
      if (!j.value("ok", false)) {
        out.ok = false;
        out.failure += j.value("failure", std::string()) + "; ";
      }
      out.retransmitted += j["counters"].value("retransmitted_packets", uint64_t{0});
      for (const auto& op : j["ops"]) {
        const uint64_t s = op["start_ns"], e = op["end_ns"];
        double& d = by_op[op["op_index"].get<uint64_t>()];
        d = std::max(d, static_cast<double>(e - s) / 1e6);
        first = std::min(first, s);
        last = std::max(last, e);
        out.op_ends_ns.push_back(e);
      }
    }
    for (const auto& [index, ms] : by_op) out.op_ms.push_back(ms);
    out.jct_ms = last > first ? static_cast<double>(last - first) / 1e6 : 0;
    return out;
  }

  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
  }
  static double slowest(const std::vector<double>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  }
  // The longest time in which no rank finished an op: a stall, as the timeline shows it.
  static double longest_quiet_ms(std::vector<uint64_t> ends) {
    std::sort(ends.begin(), ends.end());
    double longest = 0;
    for (size_t i = 1; i < ends.size(); ++i) {
      longest = std::max(longest, static_cast<double>(ends[i] - ends[i - 1]) / 1e6);
    }
    return longest;
  }
  static const Outcome& baseline() {
    static const Outcome base = run("baseline");
    return base;
  }

  static std::filesystem::path* dir_;
  static v1::Scenario* scenario_;
  static testbed::VirtualTestbed* bed_;
  static std::string* trace_;
  static std::string* setup_error_;
};
std::filesystem::path* FaultsReplayTest::dir_ = nullptr;
v1::Scenario* FaultsReplayTest::scenario_ = nullptr;
testbed::VirtualTestbed* FaultsReplayTest::bed_ = nullptr;
std::string* FaultsReplayTest::trace_ = nullptr;
std::string* FaultsReplayTest::setup_error_ = nullptr;

TEST_F(FaultsReplayTest, FlapLongerThanTimeoutsAndRetriesFailsTheJobAsNcclWould) {
  const Outcome flap = run("long-flap");
  EXPECT_FALSE(flap.ok);
  EXPECT_NE(flap.failure.find("error 12 (IBV_WC_RETRY_EXC_ERR)"), std::string::npos) << flap.failure;
  ASSERT_EQ(flap.truth.size(), 1u);
  EXPECT_EQ(flap.truth[0].kind, "link-flap");
  EXPECT_GT(flap.truth[0].start_ns, 0u);
}

TEST_F(FaultsReplayTest, ShortFlapStallsTheTimelineForAboutItsLength) {
  const Outcome& base = baseline();
  ASSERT_TRUE(base.ok) << base.failure;
  ASSERT_GT(base.jct_ms, 150) << "the job must still run when the flap begins at 100 ms";
  const Outcome flap = run("short-flap");
  ASSERT_TRUE(flap.ok) << flap.failure;
  const double quiet = longest_quiet_ms(flap.op_ends_ns);
  const double base_quiet = longest_quiet_ms(base.op_ends_ns);
  const double held = static_cast<double>(flap.truth[0].end_ns - flap.truth[0].start_ns) / 1e6;
  std::cout << "baseline: ops " << median(base.op_ms) << " ms (median), longest time without an "
            << "op ending " << base_quiet << " ms, job " << base.jct_ms << " ms; link down " << held
            << " ms: longest time without an op ending " << quiet << " ms, job " << flap.jct_ms
            << " ms\n";
  // The window runs from the link going down to its addresses and routes being back.
  EXPECT_NEAR(held, 300, 80);
  // The timeline stalls for the outage, plus up to a few 67 ms retransmission timeouts before
  // each QP's resend finds the link up again; the clean run never stalls that long.
  EXPECT_GT(quiet, 0.8 * held);
  EXPECT_LT(quiet, held + 3 * 67 + 100);
  EXPECT_LT(base_quiet, 0.8 * held);
}

TEST_F(FaultsReplayTest, LossOnOneSpineLinkIsInjectedAndSlowsTheJob) {
  const Outcome& base = baseline();
  ASSERT_TRUE(base.ok) << base.failure;
  const Outcome loss = run("spine-loss");
  ASSERT_TRUE(loss.ok) << loss.failure;
  ASSERT_EQ(loss.truth.size(), 1u);
  const auto& t = loss.truth[0];
  std::cout << "loss on leaf0-spine1: " << t.packets_acted << " of " << t.packets_matched
            << " frames dropped; " << loss.retransmitted << " resent; job " << loss.jct_ms
            << " ms vs " << base.jct_ms << " ms\n";
  EXPECT_GT(t.packets_acted, 0u);
  EXPECT_NEAR(static_cast<double>(t.packets_acted) / static_cast<double>(t.packets_matched), 0.02,
              0.01);
  EXPECT_GE(loss.retransmitted, t.packets_acted / 2);
  EXPECT_GT(loss.jct_ms, 1.05 * base.jct_ms);
}

TEST_F(FaultsReplayTest, SlowReceiverStallsTheTimelineForAboutItsPause) {
  const Outcome& base = baseline();
  ASSERT_TRUE(base.ok) << base.failure;
  const Outcome slow = run("slow-receiver");
  ASSERT_TRUE(slow.ok) << slow.failure;
  const double quiet = longest_quiet_ms(slow.op_ends_ns);
  const double base_quiet = longest_quiet_ms(base.op_ends_ns);
  std::cout << "300 ms drain pause on h1: longest time without an op ending " << quiet
            << " ms (baseline " << base_quiet << " ms); job " << slow.jct_ms << " ms vs "
            << base.jct_ms << " ms\n";
  // Frames that overflowed the receive ring in the pause come back by retransmission timeouts.
  EXPECT_GT(quiet, 0.8 * 300);
  EXPECT_LT(quiet, 300 + 3 * 67 + 100);
  EXPECT_LT(base_quiet, 0.8 * 300);
}

}  // namespace
}  // namespace collide::orchestrator::faults
