// `collide compare` through the real binary: inputs that are missing or not a report are refused
// with the file named and a non-zero exit, and a comparison made exits 0.
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace collide
