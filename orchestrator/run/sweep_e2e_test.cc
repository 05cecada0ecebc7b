// A tiny sweep through `collide run`: one all-reduce job on 2 virtual hosts, clean and with loss
// on host 1's link, at three loss probabilities, one repetition each. Each point runs into its
// own folder with its own report; the sweep's report.html draws one curve point per swept value,
// and the curves are written as PNG beside it; the expectations of every point go into one JUnit
// file, a suite per point, as a JUnit reader (python3-junitparser) reads it. Needs root
// (namespaces, BPF, AF_XDP).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

std::string scenario_text(const std::string& bed) {
  return fmt::format(R"(name: tiny-sweep
testbed:
  virtual: {{name: {}, hosts: 2, leaves: 1}}
  ranks_per_host: 1
  port: af_xdp
workload:
  collectives: {{kind: all-reduce, bytes: 256KiB, count: 4}}
transport: {{mtu_bytes: 1024, recovery: go-back-n, timeout_exponent: 14}}
faults:
  - name: lossy
    kind: loss
    link: h1
    direction: to-host
    probability: {{sweep: [0.1%, 1%, 3%]}}
    seed: 5
    roce_only: true
runs: {{baseline: true, repetitions: 1, seed: 1, variants: [{{name: loss, faults: [lossy]}}]}}
expect:
  - {{name: no repetition fails, no_failed_runs: true}}
  - {{fault_within_bound: lossy, confidence: 99.999%}}
)",
                     bed);
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The inline SVG chart with this id, and in it the data-x of the named curve's points.
std::vector<double> curve_xs(const std::string& html, const std::string& chart, const std::string& curve) {
  const size_t start = html.find("<svg id=\"" + chart + "\"");
  if (start == std::string::npos) return {};
  const std::string svg = html.substr(start, html.find("</svg>", start) - start);
  const size_t series = svg.find("<g class=\"series\" data-name=\"" + curve + "\">");
  if (series == std::string::npos) return {};
  const std::string g = svg.substr(series, svg.find("</g>", series) - series);
  static const std::regex x(R"re(<circle class="point"[^>]* data-x="([0-9.e\-]+)")re");
  std::vector<double> xs;
  for (std::sregex_iterator it(g.begin(), g.end(), x), end; it != end; ++it) xs.push_back(std::stod((*it)[1].str()));
  return xs;
}

class SweepRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("sw", "collide-sweep");
  }
  void TearDown() override { run_dir_.reset(); }
  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(SweepRunTest, EachSweptValueRunsAsAPointAndGetsOneCurvePointAndThePngsAreWritten) {
  const auto scenario = run_dir_->dir() / "tiny-sweep.yaml";
  std::ofstream(scenario) << scenario_text(run_dir_->bed());
  const auto out = run_dir_->dir() / "results";
  const auto started = std::chrono::steady_clock::now();
  const auto junit = run_dir_->dir() / "gates.xml";
  auto run = process::run_command(
      {COLLIDE_BIN, "run", scenario.string(), "--output", out.string(), "--junit", junit.string()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  ASSERT_EQ(run->exit_code, 0) << run->output;
  std::cout << fmt::format("the sweep took {:.1f} s\n", seconds);

  const auto sweep = nlohmann::json::parse(read(out / "sweep.json"), nullptr, false);
  ASSERT_TRUE(sweep.is_object()) << run->output;
  ASSERT_EQ(sweep["fields"], nlohmann::json::array({"faults[0].probability"}));
  ASSERT_EQ(sweep["points"].size(), 3u);
  const double values[] = {0.001, 0.01, 0.03};
  const char* texts[] = {"0.1%", "1%", "3%"};
  std::vector<double> slowdown;
  std::vector<double> resent;  // by the lossy variant, from the point's own report
  for (size_t k = 0; k < 3; ++k) {
    const auto& point = sweep["points"][k];
    ASSERT_EQ(point["settings"].size(), 1u);
    EXPECT_EQ(point["settings"][0]["text"], texts[k]);
    EXPECT_DOUBLE_EQ(point["settings"][0]["value"].get<double>(), values[k]);
    EXPECT_EQ(point["failure"], "");
    ASSERT_EQ(point["variants"].size(), 2u);
    EXPECT_EQ(point["variants"][0]["name"], "baseline");
    EXPECT_EQ(point["variants"][1]["name"], "loss");
    for (const auto& v : point["variants"]) {
      EXPECT_EQ(v["runs"], 1u);
      EXPECT_EQ(v["failed_runs"], 0u);
      EXPECT_GT(v["p99_us"].get<double>(), 0);
    }
    slowdown.push_back(point["variants"][1]["slowdown_geomean"].get<double>());
    // The point's own report says which point its runs belong to.
    const auto report = nlohmann::json::parse(read(out / point["directory"].get<std::string>() / "report.json"),
                                              nullptr, false);
    ASSERT_TRUE(report.is_object()) << point["directory"];
    ASSERT_EQ(report["sweep_point"].size(), 1u);
    EXPECT_EQ(report["sweep_point"][0]["field"], "faults[0].probability");
    EXPECT_EQ(report["sweep_point"][0]["text"], texts[k]);
    ASSERT_EQ(report["variants"].size(), 2u);
    resent.push_back(std::stod(report["variants"][1]["retransmitted_packets"].get<std::string>()));
    EXPECT_TRUE(std::filesystem::exists(out / point["directory"].get<std::string>() / "report.html"));
  }
  std::cout << fmt::format("under loss: slowdown {:.2f}x, {:.2f}x, {:.2f}x and {}, {}, {} packets resent at 0.1%, "
                           "1%, 3%\n",
                           slowdown[0], slowdown[1], slowdown[2], resent[0], resent[1], resent[2]);
  // Each point ran with its own value: go-back-N resends more the more is lost. (Times over one
  // repetition of so small a job are too noisy to order: 0.77x..1.30x at 0.1% in two runs here.)
  EXPECT_GT(resent[1], resent[0]);
  EXPECT_GT(resent[2], resent[1]);

  const std::string html = read(out / "report.html");
  for (const char* chart : {"slowdown-vs-faults-0-probability", "p99-vs-faults-0-probability"}) {
    const auto xs = curve_xs(html, chart, "loss");
    ASSERT_EQ(xs.size(), 3u) << chart;
    for (size_t k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(xs[k], values[k]) << chart;
    const std::string png = read(out / (std::string(chart) + ".png"));
    ASSERT_GT(png.size(), 24u) << chart;
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << chart;
  }
  EXPECT_EQ(curve_xs(html, "p99-vs-faults-0-probability", "baseline").size(), 3u);

  // Each point judged its expectations against its own value (the drops within the binomial
  // bound of that point's probability), then the sweep as a whole.
  auto gates = process::run_command({"/usr/bin/python3", COLLIDE_READ_JUNIT, junit.string()});
  ASSERT_TRUE(gates.ok()) << gates.status().to_string();
  ASSERT_EQ(gates->exit_code, 0) << gates->output;
  std::vector<std::string> suites;
  std::istringstream lines(gates->output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("suite|", 0) == 0) suites.push_back(line.substr(0, line.rfind('|') + 1));  // without the time
  }
  ASSERT_EQ(suites.size(), 4u) << gates->output;
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(suites[k], fmt::format("suite|tiny-sweep [faults[0].probability={}]|2|0|0|", texts[k])) << gates->output;
  }
  EXPECT_EQ(suites[3], "suite|tiny-sweep (sweep)|1|0|0|") << gates->output;
  EXPECT_NE(gates->output.find("case|pass|every point ran cleanly|"), std::string::npos) << gates->output;
  EXPECT_EQ(gates->output.find("case|failure"), std::string::npos) << gates->output;
  EXPECT_EQ(gates->output.find("case|error"), std::string::npos) << gates->output;
  EXPECT_FALSE(run_dir_->namespaces_left());
}

TEST_F(SweepRunTest, PlanListsThePointsAndRunsNothing) {
  const auto scenario = run_dir_->dir() / "tiny-sweep.yaml";
  std::ofstream(scenario) << scenario_text(run_dir_->bed());
  auto plan = process::run_command({COLLIDE_BIN, "plan", scenario.string(), "--json"});
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->exit_code, 0) << plan->output;
  const auto json = nlohmann::json::parse(plan->output, nullptr, false);
  ASSERT_TRUE(json.is_object()) << plan->output;
  EXPECT_EQ(json["runs_per_point"], 2u);
  ASSERT_EQ(json["points"].size(), 3u);
  EXPECT_EQ(json["points"][2]["settings"][0]["text"], "3%");
  EXPECT_FALSE(run_dir_->namespaces_left());
  EXPECT_FALSE(std::filesystem::exists(run_dir_->dir() / "results"));
}

// Refused before anything is built (no root needed): exit 2, the reason named, also in the JUnit
// file asked for.
TEST(SweepCliTest, ABadSweepIsRefusedBeforeAnythingRunsAndItsJUnitFileSaysWhy) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("collide-sweep-cli-{}", getpid());
  std::filesystem::create_directories(dir);
  std::string text = scenario_text("swcli");
  text.replace(text.find("3%]"), 3, "300%]");
  std::ofstream(dir / "bad.yaml") << text;
  auto bad = process::run_command({COLLIDE_BIN, "run", (dir / "bad.yaml").string(), "--output", (dir / "out").string(),
                                   "--junit", (dir / "gates.xml").string()});
  ASSERT_TRUE(bad.ok()) << bad.status().to_string();
  EXPECT_EQ(bad->exit_code, 2) << bad->output;
  EXPECT_NE(bad->output.find("bad.yaml:14: faults[0].probability: must be within 0..1"), std::string::npos) << bad->output;
  EXPECT_NE(bad->output.find("point 3 of 3: faults[0].probability=300%"), std::string::npos) << bad->output;

  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "point-1"));
  auto gates = process::run_command({"/usr/bin/python3", COLLIDE_READ_JUNIT, (dir / "gates.xml").string()});
  ASSERT_TRUE(gates.ok()) << gates.status().to_string();
  ASSERT_EQ(gates->exit_code, 0) << gates->output;
  EXPECT_EQ(gates->output.rfind("suite|bad|1|0|1|", 0), 0u) << gates->output;
  EXPECT_NE(gates->output.find("case|error|scenario check|"), std::string::npos) << gates->output;
  EXPECT_NE(gates->output.find("must be within 0..1"), std::string::npos) << gates->output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collide
