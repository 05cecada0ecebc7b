// `collide run` through agents, and what happens when one of them is killed mid-run: the run
// names the agent that failed, exits with a failure, keeps the partial results, and leaves no
// agent, replay, fault or namespace behind. Needs root (namespaces, BPF, AF_XDP).
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"
#include "tests/support/process_inspect.h"

namespace collide {
namespace {

using namespace std::chrono_literals;
using testing::bpf_links_of;
using testing::processes_with;

class AgentRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("ak", "collide-agent-run");
    bed_ = run_dir_->bed();
    out_ = run_dir_->dir();
  }
  void TearDown() override { run_dir_.reset(); }

  // 2 hosts x 2 ranks; `count` all-reduces of `bytes` per iteration; 1% loss towards host 1.
  std::string write_scenario(int count, const std::string& bytes, bool baseline = true,
                             int iterations = 1) {
    const auto path = out_ / "scenario.yaml";
    std::ofstream(path) << fmt::format(R"(name: agent-run
testbed:
  virtual: {{name: {}, hosts: 2, nics_per_host: 1, leaves: 1, spines: 1}}
  ranks_per_host: 2
workload:
  collectives: {{kind: all-reduce, bytes: {}, count: {}}}
  iterations: {}
transport: {{mtu_bytes: 1024, timeout_exponent: 14}}
faults:
  - {{name: lossy-h1, kind: loss, link: h1, direction: to-host, probability: 1%, seed: 7, roce_only: true}}
runs:
  baseline: {}
  variants:
    - {{name: loss, faults: [lossy-h1]}}
)",
                                       bed_, bytes, count, iterations, baseline);
    return path.string();
  }

  bool namespaces_left() const { return run_dir_->namespaces_left(); }

  std::optional<testing::CollideRunDir> run_dir_;
  std::string bed_;
  std::filesystem::path out_;
};

TEST_F(AgentRunTest, RunsABaselineAndALossyVariantThroughAgents) {
  const std::string scenario = write_scenario(2, "4MiB", /*baseline=*/true, /*iterations=*/3);
  auto run = process::run_command({COLLIDE_BIN, "run", scenario, "--output", (out_ / "results").string()});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 0) << run->output;
  EXPECT_NE(run->output.find("clock offset"), std::string::npos) << run->output;
  std::ifstream in(out_ / "results" / "report.json");
  ASSERT_TRUE(in.good()) << run->output;
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 2u);
  EXPECT_EQ(report["variants"][1]["name"], "loss");
  // What the agents' records leave out comes from the trace: every variant's table row names
  // the datatype and reduction, and each run has a JCT per training iteration.
  for (const auto& variant : report["variants"]) {
    ASSERT_EQ(variant["sizes"].size(), 1u) << variant.dump();
    EXPECT_EQ(variant["sizes"][0].value("type", ""), "bfloat16") << variant["sizes"][0].dump();
    EXPECT_EQ(variant["sizes"][0].value("redop", ""), "sum");
    EXPECT_EQ(variant["sizes"][0].value("count", ""), "6");  // 3 iterations x 2 all-reduces
    ASSERT_EQ(variant["repetitions"].size(), 1u);
    const auto& its = variant["repetitions"][0]["iteration_seconds"];
    ASSERT_EQ(its.size(), 3u) << variant["repetitions"][0].dump();
    // Ranks drift apart, so iterations overlap a little; each lies within the job.
    const double jct = variant["repetitions"][0].value("jct_seconds", 0.0);
    for (const auto& s : its) {
      EXPECT_GT(s.get<double>(), 0.0);
      EXPECT_LE(s.get<double>(), jct * 1.0001);
    }
  }
  EXPECT_FALSE(namespaces_left());
  EXPECT_TRUE(processes_with({out_.string()}).empty());
}

// A 200 ms link flap and a 150 ms slow receiver in a run of about two seconds: the results and the
// HTML timeline carry the windows measured (by the agent, by the replay), not the whole run.
TEST_F(AgentRunTest, AFlapsMeasuredWindowReachesTheResultsAndTheReport) {
  const auto path = out_ / "flap.yaml";
  std::ofstream(path) << fmt::format(R"(name: agent-flap
testbed:
  virtual: {{name: {}, hosts: 2, nics_per_host: 1, leaves: 1, spines: 1}}
  ranks_per_host: 1
workload:
  collectives: {{kind: all-reduce, bytes: 4MiB, count: 100}}
transport: {{mtu_bytes: 1024, timeout_exponent: 14}}
faults:
  - {{name: flap-h1, kind: link-flap, link: h1, start_ns: 300ms, duration_ns: 200ms}}
  - {{name: slow-h0, kind: slow-receiver, link: h0, start_ns: 900ms, duration_ns: 150ms}}
runs:
  variants:
    - {{name: flap, faults: [flap-h1, slow-h0]}}
)",
                                     bed_);
  auto run = process::run_command({COLLIDE_BIN, "run", path.string(), "--output", (out_ / "results").string()});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 0) << run->output;
  std::ifstream in(out_ / "results" / "report.json");
  ASSERT_TRUE(in.good()) << run->output;
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object());
  const auto& rep = report["variants"][0]["repetitions"][0];
  ASSERT_EQ(rep["fault_windows"].size(), 2u) << rep.dump();
  const auto window_of = [&](const std::string& name) {
    for (const auto& w : rep["fault_windows"]) {
      if (w.value("name", "") == name) return w;
    }
    return nlohmann::json();
  };
  const auto w = window_of("flap-h1");
  const double start_ms = std::stod(w.value("start_ns", std::string("0"))) / 1e6;
  const double held_ms = (std::stod(w.value("end_ns", std::string("0"))) -
                          std::stod(w.value("start_ns", std::string("0")))) / 1e6;
  const double jct_ms = rep.value("jct_seconds", 0.0) * 1e3;
  std::cout << fmt::format("flap held {:.1f} ms from {:.1f} ms of a {:.1f} ms run\n", held_ms, start_ms, jct_ms);
  EXPECT_NEAR(held_ms, 200, 40) << w.dump();
  EXPECT_NEAR(start_ms, 300, 60) << w.dump();
  EXPECT_GT(jct_ms, held_ms + 200) << "the run must outlast the flap for the window to tell";
  const auto slow = window_of("slow-h0");
  const double slow_ms = (std::stod(slow.value("end_ns", std::string("0"))) -
                          std::stod(slow.value("start_ns", std::string("0")))) / 1e6;
  std::cout << fmt::format("slow receiver held {:.1f} ms\n", slow_ms);
  EXPECT_NEAR(slow_ms, 150, 30) << slow.dump();
  std::ifstream page(out_ / "results" / "report.html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  const size_t title = html.find("flap-h1 (link-flap): ");
  ASSERT_NE(title, std::string::npos);
  EXPECT_NEAR(std::stod(html.substr(title + 21)), held_ms, 1.0);
}

TEST_F(AgentRunTest, AKilledAgentFailsTheRunByNameAndLeavesNothingBehind) {
  // Long enough to be killed in the middle of the lossy run.
  const std::string scenario = write_scenario(400, "16MiB", /*baseline=*/false);
  const std::string results = (out_ / "results").string();
  auto running = std::async(std::launch::async, [&] {
    return process::run_command({COLLIDE_BIN, "run", scenario, "--output", results, "--lease", "2"});
  });

  // Host 1's agent, once it runs the lossy variant: a replay under it and its fault armed.
  const std::string agent1_dir = (out_ / "results" / "work" / "agent-1").string();
  int agent = -1;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (std::chrono::steady_clock::now() < deadline &&
         running.wait_for(0s) != std::future_status::ready) {
    auto agents = processes_with({" agent ", agent1_dir});
    // setpriv execs collide, so the agent keeps the pid it was started with.
    if (agents.size() == 1 && bpf_links_of(agents[0]) > 0 &&
        !processes_with({" replay-child ", agent1_dir}).empty()) {
      agent = agents[0];
      break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_GT(agent, 0) << "host 1's agent never ran the lossy variant";
  std::this_thread::sleep_for(1s);
  ASSERT_EQ(kill(agent, SIGKILL), 0);

  ASSERT_EQ(running.wait_for(120s), std::future_status::ready);
  auto run = running.get();
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 1) << run->output;
  EXPECT_NE(run->output.find("agent 1 (host 1, 127.0.0.1:"), std::string::npos) << run->output;
  EXPECT_NE(run->output.find("killed by signal 9"), std::string::npos) << run->output;
  // The partial results were kept: the report exists and names the failure.
  std::ifstream in(out_ / "results" / "report.json");
  ASSERT_TRUE(in.good());
  const std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("agent 1 (host 1"), std::string::npos);
  // Nothing left: no agent or replay (their TCX fault links went with them), no namespace.
  EXPECT_TRUE(processes_with({out_.string()}).empty());
  EXPECT_FALSE(namespaces_left());
}

TEST_F(AgentRunTest, SigtermTearsDownTestbedAgentsAndFaultsAndKeepsWhatTheReplaysRecorded) {
  // Small collectives, so that many finish in the seconds before the signal.
  const std::string scenario = write_scenario(4000, "1MiB", /*baseline=*/false);
  auto run = process::ChildProcess::spawn(
      {COLLIDE_BIN, "run", scenario, "--output", (out_ / "results").string(), "--lease", "2"});
  ASSERT_TRUE(run.ok());
  // Mid-run: host 1's agent holds its fault and a replay runs under it.
  const std::string agent1_dir = (out_ / "results" / "work" / "agent-1").string();
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  bool running = false;
  while (!running && std::chrono::steady_clock::now() < deadline) {
    auto agents = processes_with({" agent ", agent1_dir});
    running = agents.size() == 1 && bpf_links_of(agents[0]) > 0 &&
              !processes_with({" replay-child ", agent1_dir}).empty();
    if (!running) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(running) << "the lossy run never started";
  // The replay child is there from the prepare on, before the go: leave time for the go and for
  // some ops to finish.
  std::this_thread::sleep_for(2s);

  const auto signalled = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(run->pid(), SIGTERM), 0);
  auto code = run->wait(60s);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
  std::cout << fmt::format("collide run stopped {:.2f} s after SIGTERM\n", took);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 1);
  EXPECT_LT(took, 5.0) << "collide run took " << took << " s to stop";
  // Nothing left: no agent or replay (their fault links went with them), no namespace.
  EXPECT_TRUE(processes_with({out_.string()}).empty());
  EXPECT_FALSE(namespaces_left());
  // The stopped replays handed back the ops they had finished: the failed run spans a time.
  std::ifstream in(out_ / "results" / "report.json");
  ASSERT_TRUE(in.good());
  const auto report = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["variants"].size(), 1u);
  const auto& loss = report["variants"][0];
  EXPECT_NE(loss["failures"].dump().find("interrupted"), std::string::npos) << loss.dump();
  ASSERT_EQ(loss["repetitions"].size(), 1u);
  EXPECT_GT(loss["repetitions"][0].value("jct_seconds", 0.0), 0.0) << loss.dump();
  // The collectives both hosts finished before the stop count in the size table.
  ASSERT_EQ(loss["sizes"].size(), 1u) << loss.dump();
  EXPECT_GT(std::stoull(loss["sizes"][0].value("count", std::string("0"))), 0u) << loss["sizes"].dump();
}

}  // namespace
}  // namespace collide
