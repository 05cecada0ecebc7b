// The JUnit XML read back by a real JUnit parser (Debian's python3-junitparser, which CI tools'
// readers resemble): the suite's counts, every case with its result and message, text with
// markup, line breaks and bytes XML cannot hold arriving intact or replaced, never breaking the file.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/process.h"
#include "orchestrator/report/junit_xml.h"

namespace collide::orchestrator::report {
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, where python3-junitparser installs

TEST(JUnitParserTest, JunitparserReadsTheSuiteAndEveryCase) {
  ASSERT_TRUE(std::filesystem::exists(kPython)) << "needs Debian's python3 (ci/packages.txt)";
  JUnitSuite suite;
  suite.name = "gates & <friends>";
  suite.timestamp = "2026-11-25T19:30:13";
  suite.seconds = 4.5;
  suite.properties.emplace_back("scenario", "\"quoted\".yaml");
  suite.cases.push_back({"baseline: no failed runs", Verdict::kPass, "0 of 3 runs failed", ""});
  suite.cases.push_back({"loss: slowdown < 1.2x", Verdict::kFail, "1.8x",
                         "slowdown 1.8x is not below 1.2x\nsee <report.html> & \"co\""});
  suite.cases.push_back({"tab\there", Verdict::kError, "", std::string("nul\0and bell\x07", 13)});
  const auto path = std::filesystem::temp_directory_path() / ("collide-junit-" + std::to_string(getpid()) + ".xml");
  ASSERT_TRUE(write_file_atomically(path, junit_xml(suite)).ok());
  auto read = process::run_command({kPython, COLLIDE_READ_JUNIT, path.string()});
  std::filesystem::remove(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->exit_code, 0) << "is python3-junitparser installed (ci/packages.txt)?\n" << read->output;
  EXPECT_EQ(read->output,
            "suite|gates & <friends>|3|1|1|4.5\n"
            "case|pass|baseline: no failed runs|\n"
            "case|failure|loss: slowdown < 1.2x|slowdown 1.8x is not below 1.2x\\nsee <report.html> & \"co\"\n"
            "case|error|tab\there|nul\xEF\xBF\xBD" "and bell\xEF\xBF\xBD\n");
}

// A sweep's file: a suite per point and one for the sweep; the root's counts are the sums.
TEST(JUnitParserTest, JunitparserReadsEverySuiteOfASweep) {
  JUnitSuite first{"loss [p=1%]", "2026-11-28T06:00:00", 2.5, {{"point", "point-1"}}, {}, ""};
  first.cases.push_back({"loss: no failed runs", Verdict::kPass, "0 of 2 runs failed", ""});
  JUnitSuite second{"loss [p=3%]", "2026-11-28T06:00:03", 3.0, {{"point", "point-2"}}, {}, "host 1: timed out"};
  second.cases.push_back({"loss: no failed runs", Verdict::kFail, "1 of 2 runs failed", "1 of 2 runs failed"});
  JUnitSuite sweep{"loss (sweep)", "2026-11-28T06:00:00", 0, {}, {}, ""};
  sweep.cases.push_back({"every point ran cleanly", Verdict::kError, "2 of 2 points", "point 2: host 1: timed out"});
  const std::string xml = junit_xml(std::vector<JUnitSuite>{first, second, sweep});
  EXPECT_NE(xml.find(R"(<testsuites name="collide" tests="3" failures="1" errors="1" skipped="0" time="5.500">)"),
            std::string::npos)
      << xml;
  const auto path = std::filesystem::temp_directory_path() / ("collide-junit-sweep-" + std::to_string(getpid()) + ".xml");
  ASSERT_TRUE(write_file_atomically(path, xml).ok());
  auto read = process::run_command({kPython, COLLIDE_READ_JUNIT, path.string()});
  std::filesystem::remove(path);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->exit_code, 0) << read->output;
  EXPECT_EQ(read->output,
            "suite|loss [p=1%]|1|0|0|2.5\n"
            "case|pass|loss: no failed runs|\n"
            "suite|loss [p=3%]|1|1|0|3.0\n"
            "case|failure|loss: no failed runs|1 of 2 runs failed\n"
            "suite|loss (sweep)|1|0|1|0.0\n"
            "case|error|every point ran cleanly|point 2: host 1: timed out\n");
}

}  // namespace
}  // namespace collide::orchestrator::report
