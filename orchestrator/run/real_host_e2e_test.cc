// `collide run` with `testbed.agents`: agents on "real hosts" that this test builds by hand (its
// own namespaces on one bridge, not collide's testbed code), each running `collide agent` on its
// host's address; the orchestrator runs in a namespace of its own on the same bridge. The job
// must complete with every byte verified, a 1% loss fault on one host's NIC must show as resends
// and as the injector's ground truth, and stopping the run must leave no replay or fault behind.
// Hosts with two NICs on the fabric run one rank on each, with traffic on both, on one segment or
// with each rail on its own behind a router. Needs root (namespaces, BPF).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/privileged.h"
#include "tests/support/process_inspect.h"

namespace collide {
namespace {

using namespace std::chrono_literals;
using testing::bpf_links_of;
using testing::processes_with;

// A uint64 field of protobuf's JSON (a quoted number), checked whole; `fallback` when absent.
uint64_t number(const nlohmann::json& j, const char* field, uint64_t fallback = 0) {
  if (!j.is_object() || !j.contains(field)) return fallback;
  const std::string text = j[field].is_string() ? j[field].get<std::string>() : j[field].dump();
  uint64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  EXPECT_TRUE(ec == std::errc() && end == text.data() + text.size()) << field << ": " << text;
  return n;
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return in.good() ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
}

// A variant of a run's report.json; nullopt when the report or the variant is missing.
std::optional<nlohmann::json> variant_in_report(const std::filesystem::path& report, const std::string& name) {
  const auto j = read_json(report);
  if (!j.is_object()) return std::nullopt;
  for (const auto& v : j["variants"]) {
    if (v["name"] == name) return v;
  }
  return std::nullopt;
}

class RealHostRunTest : public ::testing::Test {
 protected:
  static constexpr int kHosts = 2;

  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    COLLIDE_REQUIRE(testing::missing_bpf());
    COLLIDE_REQUIRE(testing::missing_tool("setpriv"));
    if (nics_ > 1) COLLIDE_REQUIRE(testing::missing_tool("sysctl"));  // ARP and forwarding settings
    prefix_ = fmt::format("{}{}", prefix_stem_, getpid() % 100000);
    // A /24 of its own per test process, so that parallel runs do not share addresses.
    subnet_ = fmt::format("10.{}.{}", 100 + getpid() % 100, getpid() / 100 % 250);
    dir_ = std::filesystem::temp_directory_path() / fmt::format("collide-real-host-{}", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    build_hosts();
    if (HasFatalFailure()) return;
    std::vector<std::string> certs = {COLLIDE_BIN, "certs", "generate", "--dir", (dir_ / "certs").string()};
    for (int h = 0; h < kHosts; ++h) {
      certs.push_back("--san");
      certs.push_back(control_ip(h));
    }
    auto generated = process::run_command(certs);
    ASSERT_TRUE(generated.ok() && generated->exit_code == 0) << (generated.ok() ? generated->output : "");
    for (int h = 0; h < kHosts; ++h) start_agent(h);
  }

  void TearDown() override {
    agents_.clear();  // kills them; their replays die with them (parent-death signal)
    for (int pid : processes_with({dir_.string()})) kill(pid, SIGKILL);
    for (const std::string& ns : namespaces_) (void)process::run_command({"ip", "netns", "del", ns});
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string ns(const std::string& role) const { return prefix_ + "-" + role; }
  std::string host_ip(int h) const { return fmt::format("{}.{}", subnet_, h + 1); }
  // The address of a host's NIC k > 0 (NIC 0 has host_ip), on the same segment.
  std::string nic_ip(int h, int k) const {
    if (k == 0) return host_ip(h);
    return routed_ ? fmt::format("{}.{}", rail_subnet(k), h + 1) : fmt::format("{}.{}", subnet_, 100 * k + h + 1);
  }
  // Rail k > 0 of a routed fabric: a segment of its own.
  std::string rail_subnet(int k) const { return fmt::format("10.{}.{}", 150 + k, getpid() % 250); }
  // Where the agent listens: on its data interface, or on a control network of its own.
  std::string control_ip(int h) const {
    return separate_control_ ? fmt::format("{}.{}", control_subnet(), h + 1) : host_ip(h);
  }
  std::string control_subnet() const { return fmt::format("10.{}.{}", 200 + getpid() % 50, getpid() / 50 % 250); }
  std::string dead_subnet() const { return fmt::format("172.{}.{}", 16 + getpid() % 16, getpid() / 16 % 250); }
  std::filesystem::path agent_dir(int h) const { return dir_ / fmt::format("agent-{}", h); }

  void sh(const std::vector<std::string>& argv) {
    auto r = process::run_command(argv);
    ASSERT_TRUE(r.ok() && r->exit_code == 0) << fmt::format("{}: {}", fmt::join(argv, " "),
                                                            r.ok() ? r->output : r.status().message());
  }

  // Two hosts and the orchestrator's machine, each a namespace with eth0 on one bridge, which
  // lives in a namespace of its own (the test's namespace is not touched).
  void build_hosts() {
    const std::string bridge = ns("br");
    sh({"ip", "netns", "add", bridge});
    namespaces_.push_back(bridge);
    sh({"ip", "-n", bridge, "link", "add", "br0", "type", "bridge"});
    sh({"ip", "-n", bridge, "link", "set", "br0", "up"});
    std::vector<std::pair<std::string, std::string>> machines;
    for (int h = 0; h < kHosts; ++h) machines.emplace_back(fmt::format("h{}", h), host_ip(h) + "/24");
    machines.emplace_back("orch", fmt::format("{}.200/24", subnet_));
    for (const auto& [role, address] : machines) {
      const std::string name = ns(role);
      sh({"ip", "netns", "add", name});
      namespaces_.push_back(name);
      const std::string port = fmt::format("{}{}", prefix_, role).substr(0, 15);
      sh({"ip", "-n", bridge, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", name});
      sh({"ip", "-n", bridge, "link", "set", port, "master", "br0", "up"});
      sh({"ip", "-n", name, "link", "set", "lo", "up"});
      sh({"ip", "-n", name, "addr", "add", address, "dev", "eth0"});
      sh({"ip", "-n", name, "link", "set", "eth0", "up"});
    }
    for (int k = 1; k < nics_; ++k) routed_ ? add_routed_rail(k) : add_nics(k);
    if (routed_) add_router();
    if (separate_control_) build_control_network();
    // A second interface on each host whose link leads nowhere: its peer end, in the same host,
    // has no address of that subnet, so nothing answers ARP on it.
    for (int h = 0; h < kHosts; ++h) {
      const std::string name = ns(fmt::format("h{}", h));
      sh({"ip", "-n", name, "link", "add", "dead0", "type", "veth", "peer", "name", "dead0end"});
      sh({"ip", "-n", name, "addr", "add", fmt::format("{}.{}/24", dead_subnet(), h + 1), "dev", "dead0"});
      sh({"ip", "-n", name, "link", "set", "dead0end", "up"});
      sh({"ip", "-n", name, "link", "set", "dead0", "up"});
    }
  }

  // eth<k> on every host, on the same bridge and segment as eth0: a flat L2 fabric. Each NIC
  // answers ARP only for its own addresses (arp_ignore 1) and asks with them (arp_announce 2), as
  // multi-NIC hosts on one segment are set up: otherwise any NIC of a host would answer for all of
  // them, and frames for one rank would arrive at another rank's NIC.
  void add_nics(int k) {
    const std::string bridge = ns("br");
    for (int h = 0; h < kHosts; ++h) {
      const std::string name = ns(fmt::format("h{}", h));
      const std::string nic = fmt::format("eth{}", k);
      for (const char* key : {"net.ipv4.conf.all.arp_ignore=1", "net.ipv4.conf.all.arp_announce=2"}) {
        sh({"ip", "netns", "exec", name, "sysctl", "-q", "-w", key});
      }
      const std::string port = fmt::format("{}h{}n{}", prefix_, h, k).substr(0, 15);
      sh({"ip", "-n", bridge, "link", "add", port, "type", "veth", "peer", "name", nic, "netns", name});
      sh({"ip", "-n", bridge, "link", "set", port, "master", "br0", "up"});
      sh({"ip", "-n", name, "addr", "add", nic_ip(h, k) + "/24", "dev", nic});
      sh({"ip", "-n", name, "link", "set", nic, "up"});
    }
  }

  // eth<k> on every host, on a bridge and segment of its own (rail k), which only a router joins to
  // the others.
  void add_routed_rail(int k) {
    const std::string bridge = ns("br");
    const std::string rail = fmt::format("rail{}", k);
    sh({"ip", "-n", bridge, "link", "add", rail, "type", "bridge"});
    sh({"ip", "-n", bridge, "link", "set", rail, "up"});
    for (int h = 0; h < kHosts; ++h) {
      const std::string name = ns(fmt::format("h{}", h));
      const std::string nic = fmt::format("eth{}", k);
      const std::string port = fmt::format("{}h{}n{}", prefix_, h, k).substr(0, 15);
      sh({"ip", "-n", bridge, "link", "add", port, "type", "veth", "peer", "name", nic, "netns", name});
      sh({"ip", "-n", bridge, "link", "set", port, "master", rail, "up"});
      sh({"ip", "-n", name, "addr", "add", nic_ip(h, k) + "/24", "dev", nic});
      sh({"ip", "-n", name, "link", "set", nic, "up"});
    }
  }

  // A router with a leg on every rail (address .254), and on every host a route out of each NIC
  // towards the other rails' segments through it (a higher metric than the segment's own route,
  // which the kernel keeps using for its own traffic).
  void add_router() {
    const std::string bridge = ns("br");
    const std::string router = ns("rt");
    sh({"ip", "netns", "add", router});
    namespaces_.push_back(router);
    sh({"ip", "netns", "exec", router, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"});
    const auto subnet_of = [&](int k) { return k == 0 ? subnet_ : rail_subnet(k); };
    for (int k = 0; k < nics_; ++k) {
      const std::string leg = fmt::format("leg{}", k);
      const std::string port = fmt::format("{}rt{}", prefix_, k).substr(0, 15);
      sh({"ip", "-n", bridge, "link", "add", port, "type", "veth", "peer", "name", leg, "netns", router});
      sh({"ip", "-n", bridge, "link", "set", port, "master", k == 0 ? "br0" : fmt::format("rail{}", k), "up"});
      sh({"ip", "-n", router, "addr", "add", fmt::format("{}.254/24", subnet_of(k)), "dev", leg});
      sh({"ip", "-n", router, "link", "set", leg, "up"});
    }
    for (int h = 0; h < kHosts; ++h) {
      const std::string name = ns(fmt::format("h{}", h));
      for (int k = 0; k < nics_; ++k) {
        for (int other = 0; other < nics_; ++other) {
          if (other == k) continue;
          sh({"ip", "-n", name, "route", "add", fmt::format("{}.0/24", subnet_of(other)), "via",
              fmt::format("{}.254", subnet_of(k)), "dev", fmt::format("eth{}", k), "metric", "100"});
        }
      }
    }
  }

  // How many datagrams the router forwarded.
  uint64_t forwarded_by_router() {
    auto r = process::run_command({"ip", "netns", "exec", ns("rt"), "cat", "/proc/net/snmp"});
    EXPECT_TRUE(r.ok() && r->exit_code == 0);
    if (!r.ok()) return 0;
    // Two "Ip:" lines: the field names, then the values; ForwDatagrams is one of them.
    std::istringstream lines(r->output);
    std::vector<std::string> names, values;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("Ip: ", 0) != 0) continue;
      std::istringstream fields(line.substr(4));
      std::vector<std::string>& into = names.empty() ? names : values;
      for (std::string f; fields >> f;) into.push_back(f);
    }
    for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
      if (names[i] != "ForwDatagrams") continue;
      uint64_t n = 0;
      const auto [end, ec] = std::from_chars(values[i].data(), values[i].data() + values[i].size(), n);
      EXPECT_TRUE(ec == std::errc() && end == values[i].data() + values[i].size()) << values[i];
      return n;
    }
    ADD_FAILURE() << "no ForwDatagrams in " << r->output;
    return 0;
  }

  // ctl0 on every machine, on a second bridge: the agents' control connections stay off eth0.
  void build_control_network() {
    const std::string bridge = ns("br");
    sh({"ip", "-n", bridge, "link", "add", "br1", "type", "bridge"});
    sh({"ip", "-n", bridge, "link", "set", "br1", "up"});
    std::vector<std::pair<std::string, std::string>> machines;
    for (int h = 0; h < kHosts; ++h) machines.emplace_back(fmt::format("h{}", h), control_ip(h) + "/24");
    machines.emplace_back("orch", fmt::format("{}.200/24", control_subnet()));
    for (const auto& [role, address] : machines) {
      const std::string name = ns(role);
      const std::string port = fmt::format("{}c{}", prefix_, role).substr(0, 15);
      sh({"ip", "-n", bridge, "link", "add", port, "type", "veth", "peer", "name", "ctl0", "netns", name});
      sh({"ip", "-n", bridge, "link", "set", port, "master", "br1", "up"});
      sh({"ip", "-n", name, "addr", "add", address, "dev", "ctl0"});
      sh({"ip", "-n", name, "link", "set", "ctl0", "up"});
    }
  }

  void start_agent(int h) {
    const std::string listen = fmt::format("{}:7411", control_ip(h));
    std::string interfaces = "eth0,dead0";
    for (int k = 1; k < nics_; ++k) interfaces += fmt::format(",eth{}", k);
    auto agent = process::ChildProcess::spawn(
        {"ip", "netns", "exec", ns(fmt::format("h{}", h)), COLLIDE_BIN, "--log-level=info", "agent",
         "--listen", listen, "--certs", (dir_ / "certs").string(), "--interfaces", interfaces,
         "--work-dir", agent_dir(h).string()});
    ASSERT_TRUE(agent.ok()) << agent.status().message();
    auto line = agent->read_line(10s);
    ASSERT_TRUE(line.ok() && line->rfind("listening", 0) == 0) << (line.ok() ? *line : line.status().message());
    agents_.push_back(std::move(agent).value());
  }

  std::string write_scenario(int count, const std::string& bytes, bool baseline) {
    const auto path = dir_ / "scenario.yaml";
    std::ofstream(path) << fmt::format(R"(name: real-hosts
testbed:
  agents:
    - {{address: "{}:7411", host: 0, interfaces: [eth0]}}
    - {{address: "{}:7411", host: 1, interfaces: [eth0]}}
  ranks_per_host: 1
  port: af_packet
workload:
  collectives: {{kind: all-reduce, bytes: {}, count: {}}}
transport: {{mtu_bytes: 1024}}
faults:
  - {{name: lossy-h1, kind: loss, link: h1, direction: to-host, probability: 1%, seed: 7, roce_only: true}}
runs:
  baseline: {}
  variants:
    - {{name: loss, faults: [lossy-h1]}}
)",
                                       control_ip(0), control_ip(1), bytes, count, baseline);
    return path.string();
  }

  // Two hosts that list eth0 and eth1, two ranks each: one per NIC (build with nics_ = 2).
  std::string write_two_nic_scenario() {
    const auto path = dir_ / "scenario.yaml";
    std::ofstream(path) << fmt::format(R"(name: real-hosts-two-nics
testbed:
  agents:
    - {{address: "{}:7411", host: 0, interfaces: [eth0, eth1]}}
    - {{address: "{}:7411", host: 1, interfaces: [eth0, eth1]}}
  ranks_per_host: 2
  port: af_packet
workload:
  collectives: {{kind: all-reduce, bytes: 2MiB, count: 8}}
transport: {{mtu_bytes: 1024}}
faults:
  - {{name: lossy-h1-nic1, kind: loss, link: h1.nic1, direction: to-host, probability: 1%, seed: 7, roce_only: true}}
runs:
  baseline: true
  variants:
    - {{name: loss, faults: [lossy-h1-nic1]}}
)",
                                       control_ip(0), control_ip(1));
    return path.string();
  }

  std::vector<std::string> run_argv(const std::string& scenario) const {
    return {"ip", "netns", "exec", ns("orch"), COLLIDE_BIN, "run", scenario, "--certs",
            (dir_ / "certs").string(), "--output", (dir_ / "results").string(), "--lease", "2"};
  }

  bool separate_control_ = false;
  int nics_ = 1;  // NICs per host on the fabric
  bool routed_ = false;  // NIC k > 0 on a segment of its own, joined by a router; else all on one
  std::string prefix_stem_ = "rh";
  std::string prefix_, subnet_;
  std::filesystem::path dir_;
  std::vector<std::string> namespaces_;
  std::vector<process::ChildProcess> agents_;
};

TEST_F(RealHostRunTest, RunsOnAgentsItDoesNotOwnWithBytesVerifiedAndLossGroundTruth) {
  auto run = process::run_command(run_argv(write_scenario(8, "2MiB", /*baseline=*/true)));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->exit_code, 0) << run->output;
  // The handshake: each agent described its interface.
  EXPECT_NE(run->output.find(fmt::format("eth0 {} mac", host_ip(1))), std::string::npos) << run->output;
  // ... with its link speed (a veth says 10000 Mb/s).
  EXPECT_NE(run->output.find("speed 10000 Mb/s"), std::string::npos) << run->output;

  // Every replay verified every byte it received: no payload or ICRC errors, all data arrived.
  int results = 0;
  for (int h = 0; h < kHosts; ++h) {
    for (const auto& e : std::filesystem::directory_iterator(agent_dir(h))) {
      // The agent's record of each run: its RunCompletion as protobuf's JSON.
      if (e.path().string().find(".completion.json") == std::string::npos) continue;
      const auto j = read_json(e.path());
      ASSERT_TRUE(j.is_object()) << e.path();
      EXPECT_TRUE(j.value("ok", false)) << e.path();
      const auto& c = j["counters"];
      EXPECT_EQ(number(c, "pattern_errors", 1), 0u) << e.path();
      EXPECT_EQ(number(c, "icrc_errors", 1), 0u) << e.path();
      // A 2-rank ring all-reduce of 2 MiB moves 2 MiB into each rank, 8 times.
      EXPECT_GE(number(c, "payload_bytes_received"), uint64_t{8} * (2u << 20)) << e.path();
      EXPECT_EQ(j["ops"].size(), 8u) << e.path();
      ++results;
    }
  }
  EXPECT_EQ(results, 2 * kHosts);  // baseline and loss, on each host

  const std::optional<nlohmann::json> loss = variant_in_report(dir_ / "results" / "report.json", "loss");
  ASSERT_TRUE(loss.has_value()) << run->output;
  EXPECT_EQ((*loss)["failed_runs"], 0);
  EXPECT_GT(std::stoull((*loss)["retransmitted_packets"].get<std::string>()), 0u);
  ASSERT_EQ((*loss)["faults"].size(), 1u);
  const auto& truth = (*loss)["faults"][0];
  const double matched = std::stod(truth["packets_matched"].get<std::string>());
  const double acted = std::stod(truth["packets_acted"].get<std::string>());
  EXPECT_GT(matched, 1000);
  // 1% of what arrived at host 1, within what a binomial draw of this size allows.
  EXPECT_NEAR(acted / matched, 0.01, 0.004) << acted << " of " << matched;
  // The faults went with the run: no BPF link is left on either agent, no replay runs.
  for (const auto& a : agents_) EXPECT_EQ(bpf_links_of(a.pid()), 0);
  for (int h = 0; h < kHosts; ++h) EXPECT_TRUE(processes_with({agent_dir(h).string() + "/run-"}).empty());
}

// Reads the scenario, replaces `from` by `to` once, writes it back.
void edit(const std::string& path, const std::string& from, const std::string& to) {
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  std::ofstream(path) << text;
}

// Leaves the scenario with its baseline alone: the lossy variant and its fault (`fault` on `link`) go.
void drop_loss_variant(const std::string& scenario, const std::string& fault = "lossy-h1",
                       const std::string& link = "h1") {
  edit(scenario, fmt::format("    - {{name: loss, faults: [{}]}}\n", fault), "");
  edit(scenario, "  variants:\n", "");
  edit(scenario,
       fmt::format("faults:\n  - {{name: {}, kind: loss, link: {}, direction: to-host, probability: 1%, "
                   "seed: 7, roce_only: true}}\n",
                   fault, link),
       "");
}

// The same hosts with a control network of their own, so that the replays may take eth0 whole.
class RealHostAfXdpTest : public RealHostRunTest {
 protected:
  RealHostAfXdpTest() { separate_control_ = true; }

  // Runs `scenario` over af_xdp, which must succeed, without its loss variant (`fault` on `link`):
  // the AF_XDP driver holds the NIC's XDP hook, where that fault would go.
  void run_over_af_xdp(const std::string& scenario, const std::string& fault, const std::string& link) {
    edit(scenario, "port: af_packet", "port: af_xdp");
    drop_loss_variant(scenario, fault, link);
    auto run = process::run_command(run_argv(scenario));
    ASSERT_TRUE(run.ok());
    ASSERT_EQ(run->exit_code, 0) << run->output;
  }
};

TEST_F(RealHostRunTest, AFlapOfAHostsOwnInterfaceStallsTheJobAndItRecovers) {
  const std::string scenario = write_scenario(16, "4MiB", /*baseline=*/false);
  edit(scenario, "{name: lossy-h1, kind: loss, link: h1, direction: to-host, probability: 1%, seed: 7, roce_only: true}",
       "{name: lossy-h1, kind: link-flap, link: h1, start_ns: 200ms, duration_ns: 300ms}");
  auto run = process::run_command(run_argv(scenario));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->exit_code, 0) << run->output;
  // Host 1's ops: the longest time in which none ended covers most of the 300 ms the link was down.
  const auto j = read_json(agent_dir(1) / "run-0-host-1.completion.json");
  ASSERT_TRUE(j.is_object());
  EXPECT_TRUE(j.value("ok", false));
  std::vector<uint64_t> ends;
  for (const auto& op : j["ops"]) ends.push_back(number(op, "end_ns"));
  ASSERT_EQ(ends.size(), 16u);
  std::sort(ends.begin(), ends.end());
  uint64_t longest = 0;
  for (size_t i = 1; i < ends.size(); ++i) longest = std::max(longest, ends[i] - ends[i - 1]);
  EXPECT_GE(longest, 250'000'000u) << "no stall of the flap's length";
  // Whichever host had frames in flight when the link went down waits out a timeout: host 1 when
  // it was sending, host 0 when host 1 was only receiving.
  const auto j0 = read_json(agent_dir(0) / "run-0-host-0.completion.json");
  ASSERT_TRUE(j0.is_object());
  EXPECT_GT(number(j, "timeouts") + number(j0, "timeouts"), 0u);
  // The interface is up again, with its address.
  auto addr = process::run_command({"ip", "-n", ns("h1"), "-4", "addr", "show", "dev", "eth0", "up"});
  ASSERT_TRUE(addr.ok());
  EXPECT_NE(addr->output.find(host_ip(1) + "/24"), std::string::npos) << addr->output;
}

TEST_F(RealHostRunTest, AnInterfaceTheAgentMayNotUseIsRefusedByName) {
  const std::string scenario = write_scenario(1, "64KiB", true);
  edit(scenario, "host: 1, interfaces: [eth0]", "host: 1, interfaces: [lo]");
  auto run = process::run_command(run_argv(scenario));
  ASSERT_TRUE(run.ok());
  EXPECT_NE(run->exit_code, 0);
  EXPECT_NE(run->output.find("interface lo is not among those this agent may use"), std::string::npos)
      << run->output;
}

TEST_F(RealHostRunTest, TwoRanksOnAnInterfaceWithOneAddressAreRefusedBeforeAnyTraffic) {
  const std::string scenario = write_scenario(1, "64KiB", true);
  edit(scenario, "ranks_per_host: 1", "ranks_per_host: 2");
  auto run = process::run_command(run_argv(scenario));
  ASSERT_TRUE(run.ok());
  EXPECT_NE(run->exit_code, 0);
  EXPECT_NE(run->output.find("interface eth0 (NIC 0) has 1 IPv4 address(es) for its 2 rank(s)"), std::string::npos)
      << run->output;
  for (int h = 0; h < kHosts; ++h) EXPECT_FALSE(std::filesystem::exists(agent_dir(h))) << "a run started";
}

TEST_F(RealHostRunTest, AfXdpOnTheInterfaceThatCarriesTheControlConnectionIsRefused) {
  const std::string scenario = write_scenario(1, "64KiB", true);
  edit(scenario, "port: af_packet", "port: af_xdp");
  // Without the lossy variant: its fault would be refused for af_xdp on its own.
  drop_loss_variant(scenario);
  auto run = process::run_command(run_argv(scenario));
  ASSERT_TRUE(run.ok());
  EXPECT_NE(run->exit_code, 0);
  EXPECT_NE(run->output.find("which port af_xdp would take over entirely"), std::string::npos) << run->output;
}

TEST_F(RealHostRunTest, APeerWhoseNextHopNeverAnswersIsNamedWithTheInterface) {
  const std::string scenario = write_scenario(1, "64KiB", true);
  edit(scenario, "host: 0, interfaces: [eth0]", "host: 0, interfaces: [dead0]");
  edit(scenario, "host: 1, interfaces: [eth0]", "host: 1, interfaces: [dead0]");
  const auto started = std::chrono::steady_clock::now();
  auto run = process::run_command(run_argv(scenario));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(run.ok());
  EXPECT_NE(run->exit_code, 0);
  // Host 0 looks for host 1 and the other way round; whichever is asked first is named.
  const std::string peer1 = fmt::format("towards peer {}.2 on interface dead0", dead_subnet());
  const std::string peer0 = fmt::format("towards peer {}.1 on interface dead0", dead_subnet());
  EXPECT_TRUE(run->output.find(peer1) != std::string::npos || run->output.find(peer0) != std::string::npos)
      << run->output;
  EXPECT_LT(took, 30.0);  // bounded: ARP is given a few seconds, not forever
  for (const auto& a : agents_) EXPECT_EQ(bpf_links_of(a.pid()), 0);
}

TEST_F(RealHostRunTest, SigtermStopsTheRunAndDisarmsTheAgentsFaults) {
  const std::string scenario = write_scenario(2000, "4MiB", /*baseline=*/false);
  auto orchestrator = process::ChildProcess::spawn(run_argv(scenario));
  ASSERT_TRUE(orchestrator.ok());
  // Host 1's agent arms the loss fault with its run: wait until it holds it and a replay runs.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline &&
         !(bpf_links_of(agents_[1].pid()) > 0 && !processes_with({agent_dir(1).string() + "/run-"}).empty())) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_GT(bpf_links_of(agents_[1].pid()), 0) << "host 1's agent never armed its fault";
  std::this_thread::sleep_for(1s);
  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(orchestrator->pid(), SIGTERM), 0);
  auto code = orchestrator->wait(30s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  std::cout << fmt::format("collide run stopped {:.2f} s after SIGTERM\n", took);
  ASSERT_TRUE(code.ok());
  EXPECT_NE(*code, 0);
  EXPECT_LT(took, 5.0);
  // The agents stay (they are not the orchestrator's), but hold no fault and run no replay.
  for (const auto& a : agents_) EXPECT_EQ(bpf_links_of(a.pid()), 0);
  EXPECT_TRUE(processes_with({agent_dir(0).string() + "/run-"}).empty());
  EXPECT_TRUE(processes_with({agent_dir(1).string() + "/run-"}).empty());
  // The stopped replays wrote what they had finished, and the partial report holds it.
  const auto report = read_json(dir_ / "results" / "report.json");
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 1u);
  const auto& loss = report["variants"][0];
  EXPECT_EQ(loss["failed_runs"], 1);
  // Its ops span a time (a replay that was killed outright would have handed back none), and
  // its counters came back with them.
  ASSERT_EQ(loss["repetitions"].size(), 1u);
  EXPECT_GT(loss["repetitions"][0].value("jct_seconds", 0.0), 0.0) << loss.dump();
  EXPECT_GT(std::stoull(loss["packets_sent"].get<std::string>()), 0u);
  EXPECT_NE(loss["failures"].dump().find("interrupted"), std::string::npos) << loss["failures"].dump();
}

TEST_F(RealHostAfXdpTest, RunsOverDpdkAfXdpWhenTheControlConnectionUsesAnotherInterface) {
#ifndef COLLIDE_HAVE_DPDK
  GTEST_SKIP() << "built without DPDK (-DCOLLIDE_WITH_DPDK=OFF)";
#endif
  run_over_af_xdp(write_scenario(8, "2MiB", true), "lossy-h1", "h1");
  if (HasFatalFailure()) return;
  for (int h = 0; h < kHosts; ++h) {
    const auto j = read_json(agent_dir(h) / fmt::format("run-0-host-{}.completion.json", h));
    ASSERT_TRUE(j.is_object()) << "host " << h;
    EXPECT_TRUE(j.value("ok", false));
    EXPECT_NE(j.value("port", std::string()).find("af_xdp"), std::string::npos) << j.value("port", std::string());
    EXPECT_EQ(number(j["counters"], "pattern_errors", 1), 0u);
    EXPECT_GE(number(j["counters"], "payload_bytes_received"), uint64_t{8} * (2u << 20));
  }
}

// Hosts with two NICs each on the fabric (eth0, eth1), two ranks per host: one per NIC.
class RealHostTwoNicTest : public RealHostRunTest {
 protected:
  RealHostTwoNicTest() {
    nics_ = 2;
    prefix_stem_ = "rn";
  }

  // What the kernel counted as sent by a host's interface.
  uint64_t tx_packets(int h, const std::string& nic) {
    auto r = process::run_command(
        {"ip", "netns", "exec", ns(fmt::format("h{}", h)), "cat", fmt::format("/sys/class/net/{}/statistics/tx_packets", nic)});
    EXPECT_TRUE(r.ok() && r->exit_code == 0);
    if (!r.ok()) return 0;
    uint64_t n = 0;
    const std::string text = r->output.substr(0, r->output.find('\n'));
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    EXPECT_TRUE(ec == std::errc() && end == text.data() + text.size()) << r->output;
    return n;
  }
};

TEST_F(RealHostTwoNicTest, AnAgentWithTwoInterfacesRunsOneRankOnEachNic) {
  std::map<std::pair<int, std::string>, uint64_t> sent_before;
  for (int h = 0; h < kHosts; ++h) {
    for (const char* nic : {"eth0", "eth1"}) sent_before[{h, nic}] = tx_packets(h, nic);
  }
  auto run = process::run_command(run_argv(write_two_nic_scenario()));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->exit_code, 0) << run->output;
  // The handshake: both interfaces of each host, with their speeds, and the rails they became.
  for (int h = 0; h < kHosts; ++h) {
    for (int k = 0; k < 2; ++k) {
      EXPECT_NE(run->output.find(fmt::format("eth{} {} mac", k, nic_ip(h, k))), std::string::npos) << run->output;
    }
  }
  EXPECT_EQ(occurrences(run->output, "speed 10000 Mb/s"), 2 * kHosts) << run->output;
  EXPECT_NE(run->output.find("2 rank(s) on 2 NIC(s) in rail order: eth0, eth1"), std::string::npos) << run->output;

  for (int h = 0; h < kHosts; ++h) {
    const auto j = read_json(agent_dir(h) / fmt::format("run-0-host-{}.completion.json", h));
    ASSERT_TRUE(j.is_object()) << "host " << h;
    EXPECT_TRUE(j.value("ok", false)) << j.dump();
    const auto& c = j["counters"];
    EXPECT_EQ(number(c, "pattern_errors", 1), 0u);
    EXPECT_EQ(number(c, "icrc_errors", 1), 0u);
    EXPECT_EQ(j["ops"].size(), 16u);  // 8 all-reduces on each of the host's 2 ranks
    // A 4-rank ring all-reduce of 2 MiB moves 3/2 x 2 MiB into each rank, 8 times; the host's
    // two ranks get some of theirs from each other, over the modeled NVLink, not the wire.
    ASSERT_EQ(j["nics"].size(), 2u) << j.dump();
    uint64_t received = 0;
    for (int k = 0; k < 2; ++k) {
      const auto& nic = j["nics"][k];
      EXPECT_NE(nic.value("port", std::string()).find(fmt::format("eth{}", k)), std::string::npos) << nic.dump();
      // Traffic on both NICs, each way, and the kernel saw it leave by that interface.
      EXPECT_GT(number(nic, "tx_frames"), 0u) << "host " << h << " NIC " << k << ": " << nic.dump();
      EXPECT_GT(number(nic, "rx_frames"), 0u) << "host " << h << " NIC " << k << ": " << nic.dump();
      const std::string ifname = fmt::format("eth{}", k);
      const uint64_t sent_by_kernel = tx_packets(h, ifname) - sent_before[std::make_pair(h, ifname)];
      EXPECT_GE(sent_by_kernel, number(nic, "tx_frames"))
          << "host " << h << " " << ifname;
      received += number(nic, "payload_bytes_received");
      std::cout << fmt::format("host {} NIC {} ({}): {} frames sent ({} by the kernel's count), {} received, {} payload bytes\n",
                               h, k, ifname, number(nic, "tx_frames"), sent_by_kernel, number(nic, "rx_frames"),
                               number(nic, "payload_bytes_received"));
    }
    EXPECT_EQ(received, number(c, "payload_bytes_received"));
    EXPECT_GT(received, 0u);
  }

  // The loss fault on h1.nic1 went on host 1's eth1: every frame it matched that it did not
  // drop reached NIC 1's engine.
  const std::optional<nlohmann::json> loss = variant_in_report(dir_ / "results" / "report.json", "loss");
  ASSERT_TRUE(loss.has_value()) << run->output;
  EXPECT_EQ((*loss)["failed_runs"], 0);
  ASSERT_EQ((*loss)["faults"].size(), 1u);
  const uint64_t matched = std::stoull((*loss)["faults"][0]["packets_matched"].get<std::string>());
  const uint64_t acted = std::stoull((*loss)["faults"][0]["packets_acted"].get<std::string>());
  const auto lossy = read_json(agent_dir(1) / "run-1-host-1.completion.json");
  ASSERT_TRUE(lossy.is_object());
  ASSERT_EQ(lossy["nics"].size(), 2u);
  std::cout << fmt::format("loss on h1.nic1: {} frames matched, {} dropped; host 1 NIC 0 received {}, NIC 1 {}\n",
                           matched, acted, number(lossy["nics"][0], "rx_frames"), number(lossy["nics"][1], "rx_frames"));
  EXPECT_GT(matched, 0u);
  EXPECT_LE(matched - acted, number(lossy["nics"][1], "rx_frames")) << lossy["nics"].dump();
  for (const auto& a : agents_) EXPECT_EQ(bpf_links_of(a.pid()), 0);
}

TEST_F(RealHostTwoNicTest, MoreRanksThanNicsShareThemEachOnAnAddressOfItsOwn) {
  // A second address on every NIC: four ranks per host, local ranks 0 and 2 on eth0, 1 and 3 on eth1.
  for (int h = 0; h < kHosts; ++h) {
    for (int k = 0; k < 2; ++k) {
      sh({"ip", "-n", ns(fmt::format("h{}", h)), "addr", "add", fmt::format("{}.{}/24", subnet_, 50 + 10 * k + h),
          "dev", fmt::format("eth{}", k)});
    }
  }
  const std::string scenario = write_two_nic_scenario();
  edit(scenario, "ranks_per_host: 2", "ranks_per_host: 4");
  drop_loss_variant(scenario, "lossy-h1-nic1", "h1.nic1");
  auto run = process::run_command(run_argv(scenario));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->exit_code, 0) << run->output;
  EXPECT_NE(run->output.find("4 rank(s) on 2 NIC(s) in rail order: eth0, eth1"), std::string::npos) << run->output;
  for (int h = 0; h < kHosts; ++h) {
    const auto j = read_json(agent_dir(h) / fmt::format("run-0-host-{}.completion.json", h));
    ASSERT_TRUE(j.is_object()) << "host " << h;
    EXPECT_TRUE(j.value("ok", false)) << j.dump();
    EXPECT_EQ(number(j["counters"], "pattern_errors", 1), 0u);
    EXPECT_EQ(j["ops"].size(), 32u);  // 8 all-reduces on each of the host's 4 ranks
    ASSERT_EQ(j["nics"].size(), 2u) << j.dump();
    for (int k = 0; k < 2; ++k) EXPECT_GT(number(j["nics"][k], "tx_frames"), 0u) << "host " << h << " NIC " << k;
  }
}

TEST_F(RealHostTwoNicTest, AFaultOnANicTheHostDoesNotHaveIsRefusedBeforeAnyRun) {
  const std::string scenario = write_two_nic_scenario();
  edit(scenario, "link: h1.nic1", "link: h1.nic2");
  auto run = process::run_command(run_argv(scenario));
  ASSERT_TRUE(run.ok());
  EXPECT_NE(run->exit_code, 0);
  // The scenario's own check, naming the line, before any agent is asked.
  EXPECT_NE(run->output.find("faults[0].link: no link 'h1.nic2': host 1's NICs are nic0..nic1"), std::string::npos)
      << run->output;
  // Not even the baseline, which has no fault, ran.
  for (int h = 0; h < kHosts; ++h) EXPECT_FALSE(std::filesystem::exists(agent_dir(h))) << "a run started";
}

// Two NICs per host over DPDK's AF_XDP driver, with the control connection on a network of its own:
// one replay opens two AF_XDP devices, one per NIC.
class RealHostTwoNicAfXdpTest : public RealHostAfXdpTest {
 protected:
  RealHostTwoNicAfXdpTest() {
    nics_ = 2;
    prefix_stem_ = "rx";
  }
};

TEST_F(RealHostTwoNicAfXdpTest, EachNicGetsItsOwnAfXdpDevice) {
#ifndef COLLIDE_HAVE_DPDK
  GTEST_SKIP() << "built without DPDK (-DCOLLIDE_WITH_DPDK=OFF)";
#endif
  run_over_af_xdp(write_two_nic_scenario(), "lossy-h1-nic1", "h1.nic1");
  if (HasFatalFailure()) return;
  for (int h = 0; h < kHosts; ++h) {
    const auto j = read_json(agent_dir(h) / fmt::format("run-0-host-{}.completion.json", h));
    ASSERT_TRUE(j.is_object()) << "host " << h;
    EXPECT_TRUE(j.value("ok", false)) << j.dump();
    EXPECT_EQ(number(j["counters"], "pattern_errors", 1), 0u);
    ASSERT_EQ(j["nics"].size(), 2u) << j.dump();
    for (int k = 0; k < 2; ++k) {
      const auto& nic = j["nics"][k];
      EXPECT_NE(nic.value("port", std::string()).find("af_xdp"), std::string::npos) << nic.dump();
      EXPECT_GT(number(nic, "tx_frames"), 0u) << "host " << h << " NIC " << k << ": " << nic.dump();
      EXPECT_GT(number(nic, "rx_frames"), 0u) << "host " << h << " NIC " << k << ": " << nic.dump();
    }
  }
}

// Each rail a segment of its own, joined by a router: a NIC's frames to a peer on another rail go to
// the router, whose MAC the agent resolves as that NIC's next hop towards the peer.
class RealHostRoutedRailsTest : public RealHostRunTest {
 protected:
  RealHostRoutedRailsTest() {
    nics_ = 2;
    routed_ = true;
    prefix_stem_ = "rr";
  }
};

TEST_F(RealHostRoutedRailsTest, CrossRailFramesGoThroughTheGatewayOfTheirNic) {
  const std::string scenario = write_two_nic_scenario();
  drop_loss_variant(scenario, "lossy-h1-nic1", "h1.nic1");
  // Without PXN (NCCL_PXN_DISABLE), a step to a peer on the other rail leaves from the sender's
  // own NIC; with it, each NIC would only talk to its own rail and nothing would cross.
  edit(scenario, "transport: {mtu_bytes: 1024}", "transport: {mtu_bytes: 1024, pxn_disable: true}");
  const uint64_t forwarded_before = forwarded_by_router();
  auto run = process::run_command(run_argv(scenario));
  ASSERT_TRUE(run.ok());
  ASSERT_EQ(run->exit_code, 0) << run->output;
  uint64_t cross_rail_sent = 0;
  for (int h = 0; h < kHosts; ++h) {
    const auto j = read_json(agent_dir(h) / fmt::format("run-0-host-{}.completion.json", h));
    ASSERT_TRUE(j.is_object()) << "host " << h;
    EXPECT_TRUE(j.value("ok", false)) << j.dump();
    EXPECT_EQ(number(j["counters"], "pattern_errors", 1), 0u);
    EXPECT_EQ(number(j["counters"], "icrc_errors", 1), 0u);
    EXPECT_EQ(j["ops"].size(), 16u);
    ASSERT_EQ(j["nics"].size(), 2u) << j.dump();
    for (const auto& nic : j["nics"]) cross_rail_sent += number(nic, "tx_frames");
  }
  // In a 4-rank ring over 2 hosts of 2 NICs, every step that leaves a host goes from one rail to
  // the other (channel 0: rank 1 on NIC 1 to rank 2 on NIC 0; channel 1: rank 0 on NIC 0 to
  // rank 3 on NIC 1; ...), its acknowledgements back: each of those frames crossed the router.
  const uint64_t forwarded = forwarded_by_router() - forwarded_before;
  std::cout << fmt::format("the router forwarded {} datagrams; the hosts' NICs sent {} frames\n", forwarded,
                           cross_rail_sent);
  EXPECT_GE(forwarded, cross_rail_sent);
}

}  // namespace
}  // namespace collide
