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

}  // namespace
}  // namespace collide::orchestrator::report
