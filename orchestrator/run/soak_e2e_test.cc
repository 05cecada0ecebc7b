// A soak through `collide run`: a tiny job (2 virtual hosts, one rank each, small all-reduces)
// under 1% loss and a link that flaps at random (`mtbf_ns`), `runs.duration_ns: 12s`, without a baseline so that an iteration is one run
// (about 2.5 s here, most of it the replays' set-up) and 12 s hold several even on a loaded
// machine. Killed with SIGKILL part way, it leaves runs.jsonl with the runs it finished, whole
// lines only; the next `collide run` of the same testbed sweeps what the killed one left, loops
// iterations until its 12 s are up with the repetition counting up, and writes a line per run.
// One test, to keep CI's time: the second run is the sweep's check and the soak's. Needs root
// (namespaces, BPF, AF_XDP).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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
using Clock = std::chrono::steady_clock;

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The lines of runs.jsonl as JSON; fails the test on a line that is not whole.
std::vector<nlohmann::json> run_lines(const std::filesystem::path& path) {
  const std::string text = read(path);
  std::vector<nlohmann::json> lines;
  EXPECT_TRUE(text.empty() || text.back() == '\n') << "a partial last line: " << text.substr(text.rfind('\n') + 1);
  size_t at = 0;
  for (size_t end; (end = text.find('\n', at)) != std::string::npos; at = end + 1) {
    auto line = nlohmann::json::parse(text.substr(at, end - at), nullptr, false);
    EXPECT_TRUE(line.is_object()) << text.substr(at, end - at);
    if (line.is_object()) lines.push_back(std::move(line));
  }
  return lines;
}

// "2026-11-28T06:10:00.123Z" as seconds since the epoch.
double utc_seconds(const nlohmann::json& text) {
  std::tm tm{};
  int ms = 0;
  if (!text.is_string() || std::sscanf(text.get<std::string>().c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year,
                                       &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
    ADD_FAILURE() << "not a UTC time: " << text.dump();
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + ms / 1000.0;
}

// The longest time from one iteration's start to the next's, in seconds.
double seconds_per_iteration(const std::vector<nlohmann::json>& lines) {
  double longest = 0;
  for (size_t k = 1; k < lines.size(); ++k) {
    longest = std::max(longest, utc_seconds(lines[k]["started"]) - utc_seconds(lines[k - 1]["started"]));
  }
  return longest;
}

size_t lines_in(const std::filesystem::path& path) {
  const std::string text = read(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The first line of `text` that starts with `prefix`; "" if none does.
std::string first_line_starting(const std::string& prefix, const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(100ms);
  }
  return true;
}

class SoakRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("sk", "collide-soak");
  }
  void TearDown() override { run_dir_.reset(); }

  std::filesystem::path write_scenario() const {
    const auto path = run_dir_->dir() / "soak.yaml";
    std::ofstream(path) << fmt::format(R"(name: tiny-soak
testbed:
  virtual: {{name: {}, hosts: 2, leaves: 1}}
  ranks_per_host: 1
  port: af_xdp
workload:
  collectives: {{kind: all-reduce, bytes: 256KiB, count: 4}}
transport: {{mtu_bytes: 1024, recovery: go-back-n, timeout_exponent: 14}}
faults:
  - {{name: lossy, kind: loss, link: h1, direction: to-host, probability: 1%, seed: 5, roce_only: true}}
  - {{name: flaps, kind: link-flap, link: h1, mtbf_ns: 5ms, duration_ns: 5ms}}
runs:
  baseline: false
  seed: 1
  duration_ns: 12s
  variants: [{{name: loss, faults: [lossy, flaps]}}]
)",
                                       run_dir_->bed());
    return path;
  }

  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(SoakRunTest, AKilledSoakKeepsWholeLinesAndTheNextSweepsItsLeftoversAndLoopsUntilItsDurationIsUp) {
  const auto scenario = write_scenario();
  const auto killed_out = run_dir_->dir() / "killed";
  const auto killed_log = killed_out / "runs.jsonl";

  // 1. Killed outright at a random moment between 6 and 10 s in, once it has finished a run:
  // nothing of its own runs after. The moment is printed, to replay a failure.
  std::random_device entropy;
  const auto kill_after = std::chrono::milliseconds(std::uniform_int_distribution<int>(6000, 10000)(entropy));
  std::cout << fmt::format("killing the soak {} ms in\n", kill_after.count());
  const auto started = Clock::now();
  // Its progress (stderr) comes through the pipe with its stdout; exec keeps the pid collide's.
  auto killed = process::ChildProcess::spawn({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", COLLIDE_BIN, "run",
                                              scenario.string(), "--output", killed_out.string()});
  ASSERT_TRUE(killed.ok()) << killed.status().to_string();
  ASSERT_TRUE(wait_until([&] { return Clock::now() - started >= kill_after && lines_in(killed_log) >= 1; }, 60s))
      << "no run finished in 60 s";
  ASSERT_EQ(kill(killed->pid(), SIGKILL), 0);
  auto code = killed->wait(10s);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGKILL);
  const std::string killed_output = killed->remaining_output();
  const std::string killed_draws = first_line_starting("collide run:   flaps: ", killed_output);
  // Every run it finished has its line: as many as it started, or one fewer when the kill came
  // during a run.
  size_t runs_started = 0;
  for (size_t at = 0; (at = killed_output.find("collide run: run ", at)) != std::string::npos; ++at) ++runs_started;
  const std::vector<nlohmann::json> kept = run_lines(killed_log);
  ASSERT_GE(kept.size(), 1u);
  EXPECT_TRUE(kept.size() == runs_started || kept.size() + 1 == runs_started)
      << kept.size() << " line(s) for " << runs_started << " run(s) started:\n" << killed_output;
  EXPECT_EQ(kept.front()["variant"], "loss");
  EXPECT_EQ(kept.front()["repetition"], 0);
  // The agents and their replays follow the killed run (their parent-death signal); the
  // namespaces stay until a run of the same testbed sweeps them.
  EXPECT_TRUE(wait_until([&] { return testing::processes_with({run_dir_->dir().string()}).empty(); }, 10s))
      << "agents or replays of the killed run still run";
  ASSERT_TRUE(run_dir_->namespaces_left()) << "a run killed outright cannot have removed its testbed";

  // 2. The next run: sweeps the killed run's testbed, then soaks for its 12 s.
  const auto out = run_dir_->dir() / "results";
  const auto soak_started = Clock::now();
  auto run = process::run_command({COLLIDE_BIN, "run", scenario.string(), "--output", out.string()});
  const double seconds = std::chrono::duration<double>(Clock::now() - soak_started).count();
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_EQ(run->exit_code, 0) << run->output;
  std::cout << fmt::format("the killed run kept {} line(s); the soak took {:.1f} s\n", kept.size(), seconds);
  EXPECT_NE(run->output.find("removing testbed " + run_dir_->bed() + ": the run that built it ended"),
            std::string::npos)
      << run->output;
  EXPECT_EQ(run->output.find("collide run: sweep: "), std::string::npos) << "the start-up sweep found state it refused:\n"
                                                            << run->output;
  EXPECT_NE(run->output.find("iteration 2: "), std::string::npos) << run->output;
  // The recurring flap drew the same occurrences for repetition 0 in both runs: a soak replays
  // exactly. 5 ms between failures against a run's 600 s horizon fills a run's 8 at once.
  const std::string draws = first_line_starting("collide run:   flaps: ", run->output);
  EXPECT_EQ(draws, killed_draws);
  EXPECT_NE(draws.find("8 occurrence(s), at "), std::string::npos) << draws;
  EXPECT_NE(draws.find("(at most 8 a run: from "), std::string::npos) << draws;
  EXPECT_NE(run->output.find("By hour of the soak"), std::string::npos) << run->output;
  EXPECT_NE(run->output.find("runs:   " + (out / "runs.jsonl").string()), std::string::npos) << run->output;
  EXPECT_NE(run->output.find("s left"), std::string::npos) << run->output;

  const std::vector<nlohmann::json> lines = run_lines(out / "runs.jsonl");
  ASSERT_GE(lines.size(), 3u) << "several iterations";
  std::cout << fmt::format("the soak ran {} iterations\n", lines.size());
  for (size_t k = 0; k < lines.size(); ++k) {
    const auto& line = lines[k];
    // Iteration after iteration, the repetition counting up with it.
    EXPECT_EQ(line["variant"], "loss") << line.dump();
    EXPECT_EQ(line["repetition"], k) << line.dump();
    EXPECT_EQ(line["iteration"], k + 1) << line.dump();
    EXPECT_EQ(line["failed"], false) << line.dump();
    EXPECT_GT(line["jct_s"].get<double>(), 0) << line.dump();
    EXPECT_EQ(line["collectives"], 4) << line.dump();
    EXPECT_GT(line["p99_us"].get<double>(), line["p50_us"].get<double>() * 0.999) << line.dump();
    EXPECT_EQ(line["started"].get<std::string>().size(), 24u) << line.dump();  // 2026-11-28T06:10:00.123Z
  }
  EXPECT_GT(lines.back()["retransmitted_packets"].get<uint64_t>(), 0u) << "1% loss and flaps resend";
  // Each run's flaps, an occurrence each, in time order. The first comes after a gap of mean
  // 5 ms: a replay that is over sooner sees none, and nearly all last longer (tens of ms).
  size_t flapped = 0;
  for (const auto& line : lines) {
    std::vector<std::string> flaps;
    double last_start_ms = -1;
    for (const auto& f : line["faults"]) {
      const std::string name = f["name"];
      if (name.rfind("flaps#", 0) != 0) continue;
      flaps.push_back(name);
      EXPECT_EQ(f["kind"], "link-flap") << f.dump();
      EXPECT_GT(f["start_ms"].get<double>(), last_start_ms) << line.dump();
      last_start_ms = f["start_ms"].get<double>();
    }
    if (flaps.empty()) continue;
    ++flapped;
    EXPECT_EQ(flaps.front(), "flaps#1") << line.dump();
  }
  EXPECT_GE(flapped * 2, lines.size()) << "few runs saw a flap";
  // An iteration starts only before the deadline, 12 s after the first started: the last one
  // went within them (plus its own set-up, up to a few seconds on a loaded machine).
  const double last_iteration = utc_seconds(lines.back()["started"]) - utc_seconds(lines.front()["started"]);
  EXPECT_LT(last_iteration, 12 + 5) << "an iteration started after the deadline";
  EXPECT_GT(last_iteration + seconds_per_iteration(lines) * 1.5, 12) << "the soak stopped before its deadline";

  // The report holds the same runs as the log.
  const auto report = nlohmann::json::parse(read(out / "report.json"), nullptr, false);
  ASSERT_TRUE(report.is_object());
  size_t runs = 0;
  for (const auto& v : report["variants"]) runs += v["runs"].get<size_t>();
  EXPECT_EQ(runs, lines.size());
  // Its faults add a recurring fault's occurrences up under the fault's own name; each detailed
  // repetition keeps its occurrences' windows; the hours table holds every run.
  const auto& variant = report["variants"][0];
  std::vector<std::string> names;
  for (const auto& f : variant["faults"]) names.push_back(f["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"flaps", "lossy"})) << variant["faults"].dump();
  bool occurrence_window = false;
  for (const auto& rep : variant["repetitions"]) {
    for (const auto& w : rep["fault_windows"]) occurrence_window = occurrence_window || w["name"] == "flaps#1";
  }
  EXPECT_TRUE(occurrence_window) << variant["repetitions"].dump();
  ASSERT_EQ(report["hours"].size(), 1u) << report["hours"].dump();
  EXPECT_EQ(report["hours"][0]["runs"], lines.size());

  // Nothing left: no process of either run, no namespace of the testbed.
  EXPECT_TRUE(testing::processes_with({run_dir_->dir().string()}).empty());
  EXPECT_FALSE(run_dir_->namespaces_left());
}

}  // namespace
}  // namespace collide
