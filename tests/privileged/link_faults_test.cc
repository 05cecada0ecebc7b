// Link faults on a veth pair between two namespaces the test makes: rate limits hold the rate
// (iperf3 through tbf, checked on tbf's own counters), flaps stop traffic and give back addresses and routes, a SIGKILLed `collide inject`
// leaves nothing behind, and the sweep removes planted leftovers.
#include <signal.h>
#include <unistd.h>

#ifdef COLLIDE_HAVE_LIBBPF
#include <bpf/bpf.h>
#endif

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"
#include "injectors/guardian.h"
#include "injectors/link_flap.h"
#include "injectors/rate_limit.h"
#include "injectors/sweep.h"
#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::testing {
namespace {

namespace fs = std::filesystem;
namespace inj = injectors;
using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kClientIp = "10.77.0.1";
constexpr const char* kServerIp = "10.77.0.2";
constexpr const char* kStaticRoute = "10.88.0.0/16";
constexpr uint64_t kRate = 200'000'000;  // bit/s

// Two namespaces joined by a veth pair with jumbo frames (so headers are under 1% of the wire
// bytes and goodput can be compared with the shaped rate) and offloads off.
class LinkFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(missing_netns());
    COLLIDE_REQUIRE(missing_tool("iperf3"));
    COLLIDE_REQUIRE(missing_tool("tc"));
    auto a = TestNetns::create("lfa");
    auto b = TestNetns::create("lfb");
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(a).value();
    b_ = std::move(b).value();
    ASSERT_TRUE(create_veth_pair(*a_, "a0", *b_, "b0").ok());
    for (auto [ns, dev] : {std::pair{a_.get(), "a0"}, std::pair{b_.get(), "b0"}}) {
      ASSERT_TRUE(run_checked({"ip", "-n", ns->name(), "link", "set", dev, "mtu", "9000"}).ok());
    }
    ASSERT_TRUE(configure_interface(*a_, "a0", fmt::format("{}/24", kClientIp)).ok());
    ASSERT_TRUE(configure_interface(*b_, "b0", fmt::format("{}/24", kServerIp)).ok());
    ASSERT_TRUE(run_checked({"ip", "-n", a_->name(), "route", "add", kStaticRoute, "via",
                             kServerIp, "dev", "a0", "metric", "7"})
                    .ok());
    state_dir_ = fs::temp_directory_path() / fmt::format("collide-lf-state-{}", getpid());
    fs::remove_all(state_dir_);
    fs::create_directories(state_dir_);
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
    fs::remove_all(state_dir_);
  }

  // Goodput of a TCP stream from a to b, in bit/s, as the receiver counted it. `during`, if
  // given, runs while the stream flows.
  double iperf_goodput(int seconds, const std::function<void()>& during = nullptr) {
    auto server = ChildProcess::spawn({"ip", "netns", "exec", b_->name(), "iperf3", "-s", "-1"});
    EXPECT_TRUE(server.ok());
    if (!server.ok()) return 0;
    // iperf3 buffers its output when it is not a terminal: look for the socket instead.
    bool listening = false;
    for (int i = 0; i < 250 && !listening; ++i) {
      listening = output_of({"ip", "netns", "exec", b_->name(), "ss", "-Hltn", "sport", "=", ":5201"})
                      .find("5201") != std::string::npos;
      if (!listening) std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(listening) << "iperf3 server did not start";
    // The first second (slow start, the bucket's initial burst) is left out of the figure.
    auto client = ChildProcess::spawn({"ip", "netns", "exec", a_->name(), "iperf3", "-c",
                                       kServerIp, "-t", std::to_string(seconds), "-O", "1", "-J"});
    EXPECT_TRUE(client.ok());
    if (!client.ok()) return 0;
    if (during) during();
    EXPECT_TRUE(client->wait(std::chrono::seconds(seconds + 20)).ok());
    const std::string output = client->remaining_output();
    server->wait(10s).ok();
    try {
      return json::parse(output).at("end").at("sum_received").at("bits_per_second");
    } catch (const json::exception& e) {
      ADD_FAILURE() << "iperf3: " << e.what() << ": " << output;
      return 0;
    }
  }

  // What the collide tbf on a device has let through and held back, as the kernel counts it.
  struct TbfCounters {
    bool found = false;
    uint64_t rate_bytes_per_second = 0;  // as configured
    uint64_t bytes = 0;                  // sent on, with link-layer headers
    uint64_t overlimits = 0;             // times a packet had to wait for tokens
  };
  TbfCounters tbf_counters(const std::string& ns, const std::string& dev) {
    TbfCounters c;
    const json j = json::parse(output_of({"tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", dev}),
                               nullptr, false);
    if (!j.is_array()) return c;
    for (const auto& q : j) {
      if (q.value("kind", "") != "tbf" || q.value("handle", "") != "c011:") continue;
      c.found = true;
      c.rate_bytes_per_second = q.value("options", json::object()).value("rate", uint64_t{0});
      c.bytes = q.value("bytes", uint64_t{0});
      c.overlimits = q.value("overlimits", uint64_t{0});
    }
    return c;
  }

  // Pushes TCP from a to b through the shaper on `dev` in `ns` and checks the shaper, from its
  // own counters, over a window in the middle of the stream: it is configured at `rate`, it held
  // packets back (the stream offered more than the rate), and it let through no more than the
  // rate. The window read from the test's clock contains the kernel's interval between the two
  // readings, so the measured rate can only be an overestimate if the shaper is right, and a
  // starved sender or receiver (CPU steal on a shared machine) can only lower it: neither makes
  // the check fail. Wall-clock goodput, which steal does lower, is printed as a figure.
  void expect_shaper_holds_rate(const std::string& ns, const std::string& dev, uint64_t rate,
                                const std::string& figure) {
    TbfCounters first, second;
    double window_seconds = 0;
    const double goodput = iperf_goodput(5, [&] {
      std::this_thread::sleep_for(1500ms);  // past slow start and the bucket's initial burst
      const auto start = std::chrono::steady_clock::now();
      first = tbf_counters(ns, dev);
      std::this_thread::sleep_for(2500ms);
      second = tbf_counters(ns, dev);
      window_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
    ASSERT_TRUE(first.found && second.found) << "no collide tbf on " << dev << " in " << ns;
    EXPECT_EQ(second.rate_bytes_per_second * 8, rate);
    // The window measured something: the stream offered more than the rate in it.
    EXPECT_GT(second.overlimits, first.overlimits) << "the stream never waited for tokens";
    const double burst_bits = 8.0 * static_cast<double>(inj::default_burst(rate));
    const double let_through_bps =
        8.0 * static_cast<double>(second.bytes - first.bytes) / window_seconds;
    std::cout << fmt::format("figure {} {:.2f} (set {:.0f}; tbf let through {:.2f} Mbit/s over "
                             "{:.2f} s)\n",
                             figure, goodput / 1e6, static_cast<double>(rate) / 1e6,
                             let_through_bps / 1e6, window_seconds);
    EXPECT_LE(let_through_bps, 1.03 * static_cast<double>(rate) + burst_bits / window_seconds)
        << fmt::format("tbf let through {:.1f} Mbit/s against {:.1f} Mbit/s",
                       let_through_bps / 1e6, static_cast<double>(rate) / 1e6);
  }

  bool ping(const std::string& ns, const std::string& to) {
    auto r = run_command({"ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "1", to});
    return r.ok() && r->exit_code == 0;
  }

  bool link_up(const std::string& ns, const std::string& dev) {
    auto j = json::parse(output_of({"ip", "-n", ns, "-j", "link", "show", "dev", dev}), nullptr, false);
    if (!j.is_array() || j.empty()) return false;
    for (const auto& flag : j[0].value("flags", json::array())) {
      if (flag == "UP") return true;
    }
    return false;
  }

  bool has_route(const std::string& ns, const std::string& prefix) {
    return output_of({"ip", "-n", ns, "route", "show", prefix}).find("via") != std::string::npos;
  }
  bool has_address(const std::string& ns, const std::string& dev, const std::string& ip) {
    return output_of({"ip", "-n", ns, "addr", "show", "dev", dev}).find(ip + "/24") != std::string::npos;
  }
  bool has_collide_qdisc(const std::string& ns) {
    return output_of({"tc", "-n", ns, "qdisc", "show"}).find("c011:") != std::string::npos;
  }
  bool has_ifb(const std::string& ns) {
    return output_of({"ip", "-n", ns, "link", "show"}).find("collide-ifb") != std::string::npos;
  }

  std::unique_ptr<TestNetns> a_, b_;
  fs::path state_dir_;
};

TEST_F(LinkFaultsTest, EgressRateLimitLetsNoMoreThanTheRateThrough) {
  const double unshaped = iperf_goodput(2);
  EXPECT_GT(unshaped, 1.5 * kRate) << "the link must be faster than the limit for the test to "
                                      "show anything";
  auto guardian = inj::Guardian::start({state_dir_});
  ASSERT_TRUE(guardian.ok()) << guardian.status().to_string();
  auto limit = inj::RateLimit::apply(**guardian, a_->name(), "a0",
                                     {kRate, 0, inj::Direction::kEgress});
  ASSERT_TRUE(limit.ok()) << limit.status().to_string();
  EXPECT_TRUE(has_collide_qdisc(a_->name()));
  expect_shaper_holds_rate(a_->name(), "a0", kRate, "rate_limit_egress_goodput_mbit");
  std::cout << fmt::format("unshaped {:.0f} Mbit/s\n", unshaped / 1e6);
  (*limit)->remove();
  EXPECT_FALSE(has_collide_qdisc(a_->name()));
  EXPECT_EQ((*guardian)->pending(), 0u);
}

TEST_F(LinkFaultsTest, IngressRateLimitThroughIfbLetsNoMoreThanTheRateThrough) {
  auto guardian = inj::Guardian::start({state_dir_});
  ASSERT_TRUE(guardian.ok());
  auto limit = inj::RateLimit::apply(**guardian, b_->name(), "b0",
                                     {kRate, 0, inj::Direction::kIngress});
  ASSERT_TRUE(limit.ok()) << limit.status().to_string();
  EXPECT_EQ((*limit)->ifb(), "collide-ifb0");
  EXPECT_TRUE(has_ifb(b_->name()));
  expect_shaper_holds_rate(b_->name(), (*limit)->ifb(), kRate, "rate_limit_ingress_goodput_mbit");
  // A second limit on the same device is refused, not stacked.
  auto again = inj::RateLimit::apply(**guardian, b_->name(), "b0",
                                     {kRate, 0, inj::Direction::kIngress});
  EXPECT_FALSE(again.ok());
  EXPECT_TRUE(has_ifb(b_->name())) << "a refused second limit must not undo the first";
  (*limit)->remove();
  EXPECT_FALSE(has_ifb(b_->name()));
  EXPECT_FALSE(has_collide_qdisc(b_->name()));
  EXPECT_EQ(output_of({"tc", "-n", b_->name(), "qdisc", "show", "dev", "b0"}).find("clsact"),
            std::string::npos)
      << "the clsact collide added goes with the redirect";
}

TEST_F(LinkFaultsTest, FlapStopsTrafficThenRestoresAddressesRoutesAndNeighbours) {
  ASSERT_TRUE(ping(a_->name(), kServerIp));
  // A permanent entry, as the testbed gives its switches for hosts that answer no ARP.
  constexpr const char* kNeighbor = "10.77.0.9";
  ASSERT_EQ(run_command({"ip", "-n", a_->name(), "neigh", "replace", kNeighbor, "lladdr",
                         "02:00:00:00:00:09", "dev", "a0", "nud", "permanent"})->exit_code, 0);
  auto has_neighbor = [&] {
    return output_of({"ip", "-n", a_->name(), "neigh", "show", "dev", "a0", "nud", "permanent"})
               .find(std::string(kNeighbor) + " lladdr 02:00:00:00:00:09") != std::string::npos;
  };
  ASSERT_TRUE(has_neighbor());
  auto guardian = inj::Guardian::start({state_dir_});
  ASSERT_TRUE(guardian.ok());
  auto down = inj::LinkDown::take_down(**guardian, a_->name(), "a0");
  ASSERT_TRUE(down.ok()) << down.status().to_string();
  EXPECT_EQ((*down)->snapshot().routes, std::vector<std::string>{"10.88.0.0/16 via 10.77.0.2"});
  EXPECT_EQ((*down)->snapshot().neighbors,
            std::vector<std::string>{"10.77.0.9 lladdr 02:00:00:00:00:09"});
  EXPECT_FALSE(link_up(a_->name(), "a0"));
  EXPECT_FALSE(has_route(a_->name(), kStaticRoute)) << "the kernel drops routes of a down link";
  EXPECT_FALSE(has_neighbor()) << "and its neighbour entries, permanent ones too";
  EXPECT_FALSE(ping(a_->name(), kServerIp));
  EXPECT_FALSE(ping(b_->name(), kClientIp));
  auto twice = inj::LinkDown::take_down(**guardian, a_->name(), "a0");
  EXPECT_FALSE(twice.ok()) << "a link already down is not flapped (nor brought up after)";
  (*down)->bring_up();
  EXPECT_TRUE(link_up(a_->name(), "a0"));
  EXPECT_TRUE(has_address(a_->name(), "a0", kClientIp));
  EXPECT_TRUE(has_route(a_->name(), kStaticRoute));
  EXPECT_TRUE(has_neighbor());
  EXPECT_TRUE(ping(a_->name(), kServerIp));
}

TEST_F(LinkFaultsTest, ScheduledFlapsRepeatAndEndUp) {
  auto guardian = inj::Guardian::start({state_dir_});
  ASSERT_TRUE(guardian.ok());
  auto schedule = inj::parse_flap_spec("300ms,800ms");
  ASSERT_TRUE(schedule.ok());
  const auto start = std::chrono::steady_clock::now();
  auto flapper = inj::LinkFlapper::start(**guardian, a_->name(), "a0", *schedule);
  ASSERT_TRUE(flapper.ok()) << flapper.status().to_string();
  // Sample the link state: down about 300 ms of every 800 ms.
  int down_samples = 0, samples = 0;
  while (std::chrono::steady_clock::now() - start < 2000ms) {
    down_samples += link_up(a_->name(), "a0") ? 0 : 1;
    ++samples;
    std::this_thread::sleep_for(20ms);
  }
  (*flapper)->stop();
  EXPECT_GE((*flapper)->flaps(), 2);
  EXPECT_TRUE((*flapper)->error().ok()) << (*flapper)->error().to_string();
  const double down_share = static_cast<double>(down_samples) / samples;
  EXPECT_GT(down_share, 0.2) << down_samples << " of " << samples;
  EXPECT_LT(down_share, 0.6) << down_samples << " of " << samples;
  EXPECT_TRUE(link_up(a_->name(), "a0"));
  EXPECT_TRUE(has_route(a_->name(), kStaticRoute));
  EXPECT_TRUE(ping(a_->name(), kServerIp));
}

#ifdef COLLIDE_BIN
// How many BPF programs are attached with TCX to a device in a namespace.
int tcx_programs(const std::string& ns, const std::string& dev) {
#ifdef COLLIDE_HAVE_LIBBPF
  auto index = run_command({"ip", "-n", ns, "-o", "link", "show", "dev", dev});
  if (!index.ok() || index->exit_code != 0) return -1;
  auto read = parse_number<int>(index->output.substr(0, index->output.find(':')), "ifindex");
  if (!read.ok()) return -1;
  const int ifindex = *read;
  auto scope = NetnsScope::enter(ns);
  if (!scope.ok()) return -1;
  int total = 0;
  for (int attach_type : {46, 47}) {  // BPF_TCX_INGRESS, BPF_TCX_EGRESS
    uint32_t ids[16];
    uint32_t count = 16;
    uint32_t flags = 0;
    if (bpf_prog_query(ifindex, static_cast<bpf_attach_type>(attach_type), 0, &flags, ids,
                       &count) != 0) {
      return -1;
    }
    total += static_cast<int>(count);
  }
  return total;
#else
  (void)ns;
  (void)dev;
  return 0;
#endif
}

// The guarantee that matters: `collide inject` killed with SIGKILL in the middle of a flap, a rate
// limit and a BPF fault leaves, within a second, no program, no qdisc, no ifb and no link down.
TEST_F(LinkFaultsTest, SigkilledInjectLeavesNothingBehindWithinOneSecond) {
  COLLIDE_REQUIRE(missing_bpf());
  auto inject = ChildProcess::spawn(
      {COLLIDE_BIN, "inject", "--netns", a_->name(), "--dev", "a0", "--direction", "ingress",
       "--proto", "udp", "--dport", "9", "--loss", "1%", "--rate", "200mbit", "--flap", "30s",
       "--state-dir", state_dir_.string()});
  ASSERT_TRUE(inject.ok());
  bool in_place = false;
  for (int i = 0; i < 200 && !in_place; ++i) {
    in_place = !link_up(a_->name(), "a0") && has_ifb(a_->name()) && has_collide_qdisc(a_->name()) &&
               tcx_programs(a_->name(), "a0") > 0;
    if (!in_place) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(in_place) << "collide inject did not put its faults in place; output: "
                        << inject->remaining_output();
  EXPECT_FALSE(ping(a_->name(), kServerIp)) << "traffic must stop while the link is down";

  ASSERT_EQ(kill(inject->pid(), SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  inject->wait(5s).ok();
  bool clean = false;
  while (!clean && std::chrono::steady_clock::now() - killed < 3s) {
    clean = link_up(a_->name(), "a0") && has_route(a_->name(), kStaticRoute) &&
            !has_ifb(a_->name()) && !has_collide_qdisc(a_->name()) &&
            tcx_programs(a_->name(), "a0") == 0;
    if (!clean) std::this_thread::sleep_for(20ms);
  }
  const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed);
  std::cout << fmt::format("figure sigkill_cleanup_ms {:.0f}\n", took.count() * 1e3);
  ASSERT_TRUE(clean) << fmt::format(
      "link up {}, route {}, ifb {}, qdisc {}, tcx programs {}", link_up(a_->name(), "a0"),
      has_route(a_->name(), kStaticRoute), has_ifb(a_->name()), has_collide_qdisc(a_->name()),
      tcx_programs(a_->name(), "a0"));
  EXPECT_LT(took.count(), 1.0);
  // bpftool 7.1 predates TCX (checked above through the kernel), but it sees tc filters and XDP.
  const auto net = json::parse(
      output_of({"ip", "netns", "exec", a_->name(), "bpftool", "-j", "net", "show", "dev", "a0"}),
      nullptr, false);
  ASSERT_TRUE(net.is_array() && !net.empty()) << "bpftool net show failed";
  EXPECT_TRUE(net[0].value("tc", json::array()).empty()) << net.dump();
  EXPECT_TRUE(net[0].value("xdp", json::array()).empty()) << net.dump();
  EXPECT_TRUE(has_address(a_->name(), "a0", kClientIp));
  EXPECT_TRUE(ping(a_->name(), kServerIp)) << "traffic flows again";
  EXPECT_TRUE(fs::is_empty(state_dir_)) << "the guardian clears the state it undid";
}

// Leftovers of a run whose guardian died too: the sweep finds them by their tags and by the state
// file, and leaves alone what a live process owns.
TEST_F(LinkFaultsTest, SweepRemovesPlantedLeftoversAndKeepsLiveOnes) {
  const std::string ns = a_->name();
  // Tagged objects with no owner.
  ASSERT_TRUE(run_checked({"tc", "-n", ns, "qdisc", "add", "dev", "a0", "root", "handle", "c011:",
                           "tbf", "rate", "1gbit", "burst", "32k", "latency", "10ms"})
                  .ok());
  ASSERT_TRUE(run_checked({"tc", "-n", ns, "qdisc", "add", "dev", "a0", "clsact"}).ok());
  ASSERT_TRUE(run_checked({"tc", "-n", ns, "filter", "add", "dev", "a0", "ingress", "pref", "7",
                           "handle", "0xc011de", "bpf", "bytecode", "1,6 0 0 0"})
                  .ok());
  ASSERT_TRUE(run_checked({"ip", "-n", ns, "link", "add", "collide-ifb7", "type", "ifb"}).ok());
  ASSERT_TRUE(run_checked({"tc", "-n", ns, "filter", "add", "dev", "a0", "ingress", "protocol",
                           "all", "pref", "49169", "u32", "match", "u32", "0", "0", "action",
                           "mirred", "egress", "redirect", "dev", "collide-ifb7"})
                  .ok());
  // Someone else's filter on the same hook stays.
  ASSERT_TRUE(run_checked({"tc", "-n", ns, "filter", "add", "dev", "a0", "egress", "pref", "9",
                           "handle", "0x1", "bpf", "bytecode", "1,6 0 0 4294967295"})
                  .ok());
  // A link a dead run took down, with its undo on disk (pid 1 started at boot, not at tick 1).
  auto snapshot = inj::take_snapshot(ns, "a0");
  ASSERT_TRUE(snapshot.ok());
  const fs::path dead_owner = inj::owner_state_dir(state_dir_, 1, 1);
  fs::create_directories(dead_owner);
  std::ofstream(dead_owner / "1.json")
      << inj::encode_undo({"link a0 down", ns, {"a0"}, snapshot->restore});
  ASSERT_TRUE(run_checked({"ip", "-n", ns, "link", "set", "a0", "down"}).ok());
  // An ifb that a live collide process (this test) has registered.
  ASSERT_TRUE(run_checked({"ip", "-n", ns, "link", "add", "collide-ifb8", "type", "ifb"}).ok());
  const fs::path live_owner =
      inj::owner_state_dir(state_dir_, getpid(), inj::process_start_time(getpid()).value());
  fs::create_directories(live_owner);
  std::ofstream(live_owner / "1.json")
      << inj::encode_undo(
             {"ifb collide-ifb8", ns, {"collide-ifb8"}, {inj::UndoStep::delete_ifb("collide-ifb8")}});

  auto sweep = run_command({COLLIDE_BIN, "inject", "--sweep", "--netns", ns, "--state-dir",
                            state_dir_.string()});
  ASSERT_TRUE(sweep.ok());
  std::cout << sweep->output;
  EXPECT_EQ(sweep->exit_code, 0) << sweep->output;
  for (const char* expected : {"undid link a0 down", "qdisc c011: (tbf) on a0",
                               "ingress bpf filter pref 7 handle 0xc011de",
                               "ingress u32 filter pref 49169", "ifb device on collide-ifb7",
                               "kept ifb collide-ifb8"}) {
    EXPECT_NE(sweep->output.find(expected), std::string::npos) << expected;
  }
  EXPECT_TRUE(link_up(ns, "a0"));
  EXPECT_TRUE(has_route(ns, kStaticRoute));
  EXPECT_FALSE(has_collide_qdisc(ns));
  const std::string filters = output_of({"tc", "-n", ns, "filter", "show", "dev", "a0", "ingress"});
  EXPECT_EQ(filters.find("c011de"), std::string::npos) << filters;
  EXPECT_EQ(filters.find("49169"), std::string::npos) << filters;
  EXPECT_NE(output_of({"tc", "-n", ns, "filter", "show", "dev", "a0", "egress"}).find("0x1"),
            std::string::npos)
      << "a filter that is not collide's stays";
  const std::string links = output_of({"ip", "-n", ns, "link", "show"});
  EXPECT_EQ(links.find("collide-ifb7"), std::string::npos);
  EXPECT_NE(links.find("collide-ifb8"), std::string::npos) << "a live owner's ifb stays";
  EXPECT_FALSE(fs::exists(dead_owner));
  EXPECT_TRUE(ping(ns, kServerIp));

  // Once its owner is gone (here: the record removed), a second sweep takes the last ifb too.
  fs::remove_all(live_owner);
  auto again = run_command({COLLIDE_BIN, "inject", "--sweep", "--netns", ns, "--state-dir",
                            state_dir_.string()});
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again->output.find("ifb device on collide-ifb8"), std::string::npos) << again->output;
  EXPECT_FALSE(has_ifb(ns));
}
#endif

}  // namespace
}  // namespace collide::testing
