#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "orchestrator/report/expectations.h"

// A scenario's expectations as JUnit XML, the report CI systems (Jenkins, GitLab, GitHub actions)
// show per test: one <testsuite> for the scenario in a <testsuites> root, one <testcase> per
// expectation, <failure> when it does not hold, <error> when it could not be judged (its variant
// never ran, or the run failed), the measured value in the case's <system-out>.
namespace collide::orchestrator::report {

struct JUnitSuite {
  std::string name;       // the scenario's name
  std::string timestamp;  // when the run started, ISO 8601 ("2026-11-25T19:30:13")
  double seconds = 0;     // how long the run took
  std::vector<std::pair<std::string, std::string>> properties;  // e.g. the scenario's file
  std::vector<ExpectationOutcome> cases;
  std::string system_err;  // why the run failed, when it did
};

std::string junit_xml(const JUnitSuite& suite);
// Several suites in one file (a sweep: one per point, and one for the sweep as a whole); the
// root's counts and time are their sums.
std::string junit_xml(const std::vector<JUnitSuite>& suites);

// Text made safe for XML 1.0 in both attribute values and element content: markup characters as
// entities; in attributes also tabs and line breaks, which a parser would otherwise fold into
// spaces; characters XML cannot hold (control characters, invalid UTF-8) as U+FFFD.
std::string xml_escape(std::string_view text);

// Writes through a temporary file beside `path` and a rename, so that a reader (a CI job picking
// the file up) never sees half of it, and an earlier file stays whole until the new one is.
Status write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace collide::orchestrator::report
