// `collide compare` through the real binary: inputs that are missing or not a report are refused
// with the file named and a non-zero exit, and a comparison made exits 0.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/process.h"

namespace collide {
namespace {

namespace fs = std::filesystem;

// A results directory holding a report.json of one variant with `reps` repetitions whose one row
// of all-reduces takes about `us` microseconds.
void write_report(const fs::path& dir, int reps, double us) {
  fs::create_directories(dir);
  std::ofstream out(dir / "report.json");
  out << R"({"scenario": "cli", "variants": [{"name": "baseline", "repetitions": [)";
  for (int r = 0; r < reps; ++r) {
    out << (r ? "," : "") << R"({"repetition": )" << r << R"(, "jct_seconds": )" << us * 1e-4 * (1 + 0.01 * r)
        << R"(, "collective_times": [{"kind": "all_reduce", "size_bytes": "1048576", "count": "3",
        "times_us": [)" << us << "," << us * 1.02 << "," << us * (1.01 + 0.01 * r) << "]}]}";
  }
  out << "]}]}";
}

class CompareCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-compare-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CompareCliTest, MissingReportIsNamed) {
  write_report(dir_ / "b", 3, 100);
  auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "b").string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("collide compare: A: " + (dir_ / "a").string() + ": cannot read it"),
            std::string::npos)
      << out->output;
}

TEST_F(CompareCliTest, ReportThatIsNotJsonIsNamed) {
  write_report(dir_ / "a", 3, 100);
  std::ofstream(dir_ / "b.json") << "size(B) count type\n";
  auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "b.json").string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("B: " + (dir_ / "b.json").string() + ": not a collide report.json"),
            std::string::npos)
      << out->output;
}

TEST_F(CompareCliTest, ReportWithANegativeTimeIsNamed) {
  write_report(dir_ / "a", 3, 100);
  write_report(dir_ / "b", 3, -5);
  auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "b").string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("variant baseline repetition 0"), std::string::npos) << out->output;
}

TEST_F(CompareCliTest, LevelOutOfRangeIsRefused) {
  write_report(dir_ / "a", 3, 100);
  auto out = process::run_command(
      {COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "a").string(), "--level", "95"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_NE(out->exit_code, 0) << out->output;
  EXPECT_NE(out->output.find("--level"), std::string::npos) << out->output;
}

TEST_F(CompareCliTest, ComparisonMadeExitsZeroAndWritesItsFiles) {
  write_report(dir_ / "a", 3, 100);
  write_report(dir_ / "b", 3, 200);
  auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "b" / "report.json").string(),
                                   "--html", (dir_ / "c.html").string(), "--json", (dir_ / "c.json").string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 0) << out->output;
  EXPECT_NE(out->output.find("B / A"), std::string::npos) << out->output;
  EXPECT_NE(out->output.find("worse"), std::string::npos) << out->output;
  EXPECT_GT(fs::file_size(dir_ / "c.html"), 0u);
  EXPECT_GT(fs::file_size(dir_ / "c.json"), 0u);
}

TEST_F(CompareCliTest, UnwritableHtmlFails) {
  write_report(dir_ / "a", 3, 100);
  auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "a").string(),
                                   "--html", (dir_ / "no-such-dir" / "c.html").string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 1) << out->output;
  EXPECT_NE(out->output.find("c.html: cannot write it"), std::string::npos) << out->output;
}

// Nightly CI against a stored baseline: B slower by half fails "no-worse" and a JCT bound, exits 1
// and says so in the JUnit file; the same run against itself holds both and exits 0.
TEST_F(CompareCliTest, GatesAgainstAStoredBaselineExitOneWhenBIsWorse) {
  write_report(dir_ / "baseline", 3, 100);
  write_report(dir_ / "tonight", 3, 150);
  const fs::path junit = dir_ / "gates.xml";
  auto worse = process::run_command({COLLIDE_BIN, "compare", (dir_ / "baseline").string(),
                                     (dir_ / "tonight").string(), "--expect", "no-worse", "--expect",
                                     "jct-ratio-below=1.2", "--junit", junit.string()});
  ASSERT_TRUE(worse.ok()) << worse.status().to_string();
  EXPECT_EQ(worse->exit_code, 1) << worse->output;
  EXPECT_NE(worse->output.find("expectations: 0 of 2 hold"), std::string::npos) << worse->output;
  EXPECT_NE(worse->output.find("FAIL   baseline: no worse than A"), std::string::npos) << worse->output;
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("tests=\"2\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("failures=\"2\""), std::string::npos) << xml;

  auto same = process::run_command({COLLIDE_BIN, "compare", (dir_ / "baseline").string(),
                                    (dir_ / "baseline").string(), "--expect", "no-worse", "--expect",
                                    "jct-ratio-below=1.2", "--junit", junit.string()});
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ(same->exit_code, 0) << same->output;
  EXPECT_NE(same->output.find("expectations: 2 of 2 hold"), std::string::npos) << same->output;
}

TEST_F(CompareCliTest, GatesThatCannotBeJudgedAreErrorsNotPasses) {
  write_report(dir_ / "a", 1, 100);
  write_report(dir_ / "b", 1, 100);
  auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "b").string(),
                                   "--expect", "no-worse"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 1) << out->output;
  EXPECT_NE(out->output.find("ERROR  baseline: no worse than A"), std::string::npos) << out->output;
  EXPECT_NE(out->output.find("too few repetitions"), std::string::npos) << out->output;
}

TEST_F(CompareCliTest, AGateThatIsNotOneIsRefused) {
  write_report(dir_ / "a", 3, 100);
  for (const char* gate : {"faster", "jct-ratio-below=x", "jct-ratio-below=-1"}) {
    auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "a").string(),
                                     "--expect", gate});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(out->exit_code, 2) << gate << ": " << out->output;
    EXPECT_NE(out->output.find("jct-ratio-below"), std::string::npos) << gate << ": " << out->output;
  }
}

// A sweep's results directory as `collide run` leaves it: sweep.json naming each point's values
// and folder, and each point's report.json (3 repetitions of all-reduces taking about `us` each).
void write_sweep(const fs::path& dir, const std::vector<std::pair<std::string, double>>& probabilities,
                 const std::vector<double>& us) {
  fs::create_directories(dir);
  std::ofstream out(dir / "sweep.json");
  out << R"({"scenario": "loss-sweep", "fields": ["faults[0].probability"], "points": [)";
  for (size_t k = 0; k < probabilities.size(); ++k) {
    const std::string folder = "point-" + std::to_string(k + 1);
    out << (k ? "," : "") << R"({"settings": [{"field": "faults[0].probability", "text": ")"
        << probabilities[k].first << R"(", "value": )" << probabilities[k].second << R"(}], "directory": ")"
        << folder << R"("})";
    write_report(dir / folder, 3, us[k]);
  }
  out << "]}";
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Two sweeps of the same loss rates (written "1%" in one and "0.01" in the other: the same
// value, the same point), B slower at the highest rate only: each point is compared with its
// match, the gates judge each point, and the JUnit file has a suite per point.
TEST_F(CompareCliTest, TwoSweepsAreComparedPointByPointAndGatedPerPoint) {
  write_sweep(dir_ / "switch-a", {{"0.1%", 0.001}, {"1%", 0.01}}, {100, 100});
  write_sweep(dir_ / "switch-b", {{"0.001", 0.001}, {"0.01", 0.01}}, {100, 160});
  const fs::path junit = dir_ / "gates.xml";
  auto out = process::run_command({COLLIDE_BIN, "compare", (dir_ / "switch-a").string(),
                                   (dir_ / "switch-b" / "sweep.json").string(), "--expect", "no-worse", "--junit",
                                   junit.string(), "--json", (dir_ / "c.json").string(), "--html",
                                   (dir_ / "c.html").string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 1) << out->output;
  const size_t low = out->output.find("== point faults[0].probability=0.1%");
  const size_t high = out->output.find("== point faults[0].probability=1%");
  ASSERT_NE(low, std::string::npos) << out->output;
  ASSERT_NE(high, std::string::npos) << out->output;
  EXPECT_EQ(out->output.substr(low, high - low).find("worse"), std::string::npos) << out->output;
  EXPECT_NE(out->output.substr(high).find("worse"), std::string::npos) << out->output;
  EXPECT_NE(out->output.find("PASS   baseline: no worse than A"), std::string::npos) << out->output;
  EXPECT_NE(out->output.find("FAIL   baseline: no worse than A"), std::string::npos) << out->output;
  // Its one row is worse in p50 and in p99: one row of one.
  EXPECT_NE(out->output.find("JCT B/A 1.600 (1.564..1.636); 1 of 1 collective rows' p50 or p99 worse"),
            std::string::npos)
      << out->output;

  const std::string xml = read_file(junit);
  EXPECT_NE(xml.find(R"(<testsuites name="collide" tests="2" failures="1" errors="0")"), std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(<testsuite name="collide compare [faults[0].probability=1%]" tests="1" failures="1")"),
            std::string::npos)
      << xml;
  const std::string json = read_file(dir_ / "c.json");
  EXPECT_NE(json.find("\"point\": \"faults[0].probability=0.1%\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"not_compared\": []"), std::string::npos) << json;
  const std::string html = read_file(dir_ / "c.html");
  EXPECT_NE(html.find("<h2 class=\"point\">point faults[0].probability=1%</h2>"), std::string::npos);
}

// A point of one sweep only is listed, and under a gate it is an error, never a pass.
TEST_F(CompareCliTest, APointOfOneSweepOnlyIsNamedAndCannotPassAGate) {
  write_sweep(dir_ / "a", {{"0.1%", 0.001}, {"1%", 0.01}}, {100, 100});
  write_sweep(dir_ / "b", {{"0.1%", 0.001}, {"3%", 0.03}}, {100, 100});
  auto out = process::run_command(
      {COLLIDE_BIN, "compare", (dir_ / "a").string(), (dir_ / "b").string(), "--expect", "no-worse"});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 1) << out->output;
  EXPECT_NE(out->output.find("point faults[0].probability=1%: not compared: only in A"), std::string::npos)
      << out->output;
  EXPECT_NE(out->output.find("point faults[0].probability=3%: not compared: only in B"), std::string::npos)
      << out->output;
  EXPECT_NE(out->output.find("ERROR  point faults[0].probability=3%"), std::string::npos) << out->output;
}

TEST_F(CompareCliTest, ASweepAgainstASingleRunOrOtherFieldsIsRefused) {
  write_sweep(dir_ / "sweep", {{"1%", 0.01}}, {100});
  write_report(dir_ / "run", 3, 100);
  auto mixed = process::run_command({COLLIDE_BIN, "compare", (dir_ / "run").string(), (dir_ / "sweep").string()});
  ASSERT_TRUE(mixed.ok()) << mixed.status().to_string();
  EXPECT_EQ(mixed->exit_code, 2) << mixed->output;
  EXPECT_NE(mixed->output.find("B is a sweep (sweep.json) and A a single run"), std::string::npos) << mixed->output;

  fs::create_directories(dir_ / "other");
  std::ofstream(dir_ / "other" / "sweep.json")
      << R"({"scenario": "qps", "fields": ["transport.qps_per_connection"], "points": [{"settings": [{"field": )"
         R"("transport.qps_per_connection", "text": "2", "value": 2}], "directory": "point-1"}]})";
  auto other = process::run_command({COLLIDE_BIN, "compare", (dir_ / "sweep").string(), (dir_ / "other").string()});
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  EXPECT_EQ(other->exit_code, 2) << other->output;
  EXPECT_NE(other->output.find("A sweeps faults[0].probability and B sweeps transport.qps_per_connection"),
            std::string::npos)
      << other->output;
  std::ofstream(dir_ / "other" / "sweep.json") << "{not json";
  auto broken = process::run_command({COLLIDE_BIN, "compare", (dir_ / "sweep").string(), (dir_ / "other").string()});
  ASSERT_TRUE(broken.ok()) << broken.status().to_string();
  EXPECT_EQ(broken->exit_code, 2) << broken->output;
  EXPECT_NE(broken->output.find("B: " + (dir_ / "other" / "sweep.json").string() + ": not a collide sweep.json"),
            std::string::npos)
      << broken->output;
}

}  // namespace
}  // namespace collide
