// An agent whose orchestrator vanishes stops its replay and disarms its faults within the lease;
// a peer without a certificate gets nothing. Needs root (namespaces, BPF).
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collide/agent.pb.h"
#include "common/process.h"
#include "orchestrator/agent/agent_server.h"
#include "orchestrator/control/certs.h"
#include "orchestrator/control/tls_channel.h"
#include "orchestrator/run/workload.h"
#include "orchestrator/testbed/virtual_testbed.h"
#include "tests/support/leaf_spine_spec.h"
#include "tests/support/privileged.h"
#include "tests/support/process_inspect.h"

namespace collide::orchestrator::agent {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace tb = testbed;
using collide::testing::bpf_links_of;

// Processes whose parent is `pid` (from /proc/*/stat: field 4 after the command in parentheses).
std::vector<int> children_of(int pid) {
  std::vector<int> out;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return out;
  while (dirent* e = readdir(proc)) {
    const int child = atoi(e->d_name);
    if (child <= 0) continue;
    std::ifstream in(fmt::format("/proc/{}/stat", child));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid && state != "Z") out.push_back(child);
  }
  closedir(proc);
  return out;
}

class AgentLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(::collide::testing::missing_netns());
    COLLIDE_REQUIRE(::collide::testing::missing_bpf());
    dir_ = std::filesystem::temp_directory_path() / fmt::format("collide-agent-lease-{}", getpid());
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(control::generate_certs(dir_ / "certs").ok());

    const std::string name = fmt::format("al{}", getpid() % 10000);  // names are at most 6 characters
    auto plan = tb::plan_testbed(::collide::testing::leaf_spine_spec(name, 2, 1, 1));
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    plan_ = *plan;
    auto bed = tb::VirtualTestbed::create(*plan);
    ASSERT_TRUE(bed.ok()) << bed.status().message();
    bed_ = std::move(bed).value();

    v1::Scenario scenario;
    scenario.mutable_workload()->mutable_collectives()->set_kind(v1::OP_KIND_ALL_REDUCE);
    scenario.mutable_workload()->mutable_collectives()->set_bytes(1 << 20);
    scenario.mutable_workload()->mutable_collectives()->set_count(1000);
    auto trace = prepare_workload(scenario, 4, dir_);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    std::ifstream in(*trace, std::ios::binary);
    trace_bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());

    auto agent = process::ChildProcess::spawn({COLLIDE_BIN, "agent", "--listen", "127.0.0.1:0",
                                               "--certs", (dir_ / "certs").string(), "--work-dir",
                                               (dir_ / "agent").string()});
    ASSERT_TRUE(agent.ok());
    agent_.emplace(std::move(agent).value());
    auto line = agent_->read_line(10s);
    ASSERT_TRUE(line.ok()) << line.status().message();
    ASSERT_EQ(line->rfind("listening 127.0.0.1:", 0), 0u) << *line;
    port_ = static_cast<uint16_t>(std::stoi(line->substr(line->rfind(':') + 1)));
  }

  void TearDown() override {
    agent_.reset();
    bed_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  std::unique_ptr<control::Channel> connect() {
    auto channel = control::Channel::connect("127.0.0.1", port_, control::orchestrator_files(dir_ / "certs"), 5s);
    EXPECT_TRUE(channel.ok()) << channel.status().message();
    return channel.ok() ? std::move(channel).value() : nullptr;
  }

  // Host 1's part of a run with 1% loss towards it; host 0 never runs, so the replay waits for
  // its peers until the lease ends it.
  v1::AgentRequest prepare(uint64_t lease_ms) {
    v1::AgentRequest r;
    v1::PrepareRun* p = r.mutable_prepare();
    p->set_run_index(0);
    p->set_host(1);
    p->set_trace(trace_bytes_);
    p->add_ranks(2);
    p->add_ranks(3);
    p->set_ranks_per_host(2);
    p->set_nics_per_host(1);
    v1::Fault* f = p->add_faults();
    f->set_name("lossy-h1");
    f->set_kind(v1::Fault::KIND_LOSS);
    f->set_link("h1");
    f->set_probability(0.01);
    f->set_seed(7);
    p->set_lease_ms(lease_ms);
    // 4.3 s per attempt, 8 attempts: the replay outlives every lease here unless it is stopped.
    p->mutable_transport()->set_timeout_exponent(20);
    p->set_run_timeout_s(120);
    *p->mutable_testbed() = bed_spec();
    const tb::HostNic& nic = plan_.nics[1];
    v1::RunNic* run_nic = p->add_nics();
    run_nic->set_port("dpdk:net_af_xdp1,iface=" + nic.ifname);
    run_nic->set_next_hop_mac(nic.gateway_mac);
    p->set_netns(nic.netns);
    p->set_lcore(1);
    return r;
  }

  v1::VirtualTestbedSpec bed_spec() const {
    return ::collide::testing::leaf_spine_spec(plan_.name, 2, 1, 1);
  }

  // Prepares and starts the run; returns when the replay runs and the fault is armed.
  void start_run(control::Channel& channel, uint64_t lease_ms) {
    ASSERT_TRUE(channel.send(prepare(lease_ms)).ok());
    auto reply = channel.receive_message<v1::AgentReply>(60s);
    ASSERT_TRUE(reply.ok() && reply->has_value()) << reply.status().message();
    ASSERT_TRUE((*reply)->has_prepared()) << (*reply)->DebugString();
    EXPECT_EQ((*reply)->prepared().armed_faults(), 1u);
    v1::AgentRequest start;
    start.mutable_start()->set_run_index(0);
    start.mutable_start()->set_start_at_agent_ns(monotonic_ns());
    ASSERT_TRUE(channel.send(start).ok());
    EXPECT_EQ(children_of(agent_->pid()).size(), 1u);  // the replay
    EXPECT_GE(bpf_links_of(agent_->pid()), 1);         // the armed fault
  }

  // How long until the agent has no replay and no fault left (or `limit` passed).
  Clock::duration until_clean(Clock::duration limit) {
    const auto from = Clock::now();
    while (Clock::now() - from < limit) {
      if (children_of(agent_->pid()).empty() && bpf_links_of(agent_->pid()) == 0) break;
      std::this_thread::sleep_for(50ms);
    }
    return Clock::now() - from;
  }

  std::filesystem::path dir_;
  tb::TestbedPlan plan_;
  std::unique_ptr<tb::VirtualTestbed> bed_;
  std::string trace_bytes_;
  std::optional<process::ChildProcess> agent_;
  uint16_t port_ = 0;
};

TEST_F(AgentLeaseTest, ASilentOrchestratorLosesItsRunWithinTheLease) {
  auto channel = connect();
  ASSERT_NE(channel, nullptr);
  start_run(*channel, 1500);
  // From here on, silence: the connection stays open, but no heartbeat comes.
  const auto took = until_clean(10s);
  EXPECT_TRUE(children_of(agent_->pid()).empty()) << "the replay still runs";
  EXPECT_EQ(bpf_links_of(agent_->pid()), 0) << "a fault is still armed";
  // The lease, then stopping the replay and detaching the rules (slower on a busy machine).
  EXPECT_LT(took, 1500ms + 2s);
  EXPECT_EQ(kill(agent_->pid(), 0), 0) << "the agent itself keeps serving";
}

TEST_F(AgentLeaseTest, ADisconnectedOrchestratorLosesItsRunAtOnce) {
  auto channel = connect();
  ASSERT_NE(channel, nullptr);
  start_run(*channel, 30000);
  channel.reset();
  const auto took = until_clean(10s);
  EXPECT_TRUE(children_of(agent_->pid()).empty());
  EXPECT_EQ(bpf_links_of(agent_->pid()), 0);
  EXPECT_LT(took, 2s);
}

TEST_F(AgentLeaseTest, HeartbeatsKeepTheRunGoing) {
  auto channel = connect();
  ASSERT_NE(channel, nullptr);
  start_run(*channel, 1000);
  v1::AgentRequest beat;
  beat.mutable_heartbeat();
  for (int i = 0; i < 12; ++i) {  // 3 s, three leases
    ASSERT_TRUE(channel->send(beat).ok());
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_EQ(children_of(agent_->pid()).size(), 1u);
  EXPECT_GE(bpf_links_of(agent_->pid()), 1);
  v1::AgentRequest stop;
  stop.mutable_stop()->set_reason("test over");
  ASSERT_TRUE(channel->send(stop).ok());
  // Progress reports may come first; then the completion of the stopped run.
  bool stopped = false;
  for (int i = 0; i < 50 && !stopped; ++i) {
    auto reply = channel->receive_message<v1::AgentReply>(200ms);
    ASSERT_TRUE(reply.ok());
    stopped = reply->has_value() && (*reply)->has_completion() && (*reply)->completion().stopped();
  }
  EXPECT_TRUE(stopped);
  EXPECT_LT(until_clean(5s), 2s);
}

TEST_F(AgentLeaseTest, APeerWithoutACertificateGetsNothing) {
  control::TlsFiles no_cert;
  no_cert.ca = dir_ / "certs" / "ca.pem";
  auto channel = control::Channel::connect("127.0.0.1", port_, no_cert, 5s);
  if (channel.ok()) {
    v1::AgentRequest probe;
    probe.mutable_clock()->set_orchestrator_send_ns(1);
    (void)(*channel)->send(probe);
    auto reply = (*channel)->receive_message<v1::AgentReply>(5s);
    EXPECT_FALSE(reply.ok() && reply->has_value());
  }
  // The agent still serves those who have one.
  auto good = connect();
  ASSERT_NE(good, nullptr);
  v1::AgentRequest probe;
  probe.mutable_clock()->set_orchestrator_send_ns(5);
  ASSERT_TRUE(good->send(probe).ok());
  auto reply = good->receive_message<v1::AgentReply>(5s);
  ASSERT_TRUE(reply.ok() && reply->has_value());
  EXPECT_EQ((*reply)->clock().orchestrator_send_ns(), 5u);
}

}  // namespace
}  // namespace collide::orchestrator::agent
