#include "orchestrator/report/junit_xml.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::report {
namespace {

TEST(JUnitXmlTest, EscapesMarkupInTextAndAttributes) {
  EXPECT_EQ(xml_escape(R"(a<b & "c" > 'd')"), "a&lt;b &amp; &quot;c&quot; &gt; &apos;d&apos;");
  // Line breaks and tabs survive in attribute values only as character references.
  EXPECT_EQ(xml_escape("one\ntwo\tthree\r"), "one&#10;two&#9;three&#13;");
  EXPECT_EQ(xml_escape("already &amp;"), "already &amp;amp;");
}

TEST(JUnitXmlTest, KeepsUtf8AndReplacesWhatXmlCannotHold) {
  EXPECT_EQ(xml_escape("1.2 \xC2\xB5s \xE2\x86\x92 ok \xF0\x9F\x9A\x80"), "1.2 \xC2\xB5s \xE2\x86\x92 ok \xF0\x9F\x9A\x80");
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(xml_escape(std::string("a\0b", 3)), "a" + fffd + "b");     // NUL
  EXPECT_EQ(xml_escape("bell\x07" "esc\x1B"), "bell" + fffd + "esc" + fffd);
  EXPECT_EQ(xml_escape("bad\xFFtail"), "bad" + fffd + "tail");      // not UTF-8 at all
  EXPECT_EQ(xml_escape("cut\xE2\x86"), "cut" + fffd + fffd);        // a truncated sequence
  EXPECT_EQ(xml_escape("\xC0\xAF"), fffd + fffd);                    // overlong '/'
  EXPECT_EQ(xml_escape("\xED\xA0\x80"), fffd + fffd + fffd);         // a UTF-16 surrogate
  EXPECT_EQ(xml_escape("\xEF\xBF\xBE"), fffd);                       // U+FFFE, not an XML character
}

JUnitSuite suite() {
  JUnitSuite s;
  s.name = "gates <nightly>";
  s.timestamp = "2026-11-25T19:30:13";
  s.seconds = 12.3456;
  s.properties.emplace_back("scenario", "configs/a&b.yaml");
  s.cases.push_back({"loss: slowdown < 2x", Verdict::kPass, "1.5x", ""});
  s.cases.push_back({"busbw \"80%\"", Verdict::kFail, "40.0%", "busbw 40.0% of line rate is below 80%\nsecond line"});
  s.cases.push_back({"flap: no failed runs", Verdict::kError, "", "variant 'flap' has no results"});
  s.system_err = "agent h1 <went> away";
  return s;
}

TEST(JUnitXmlTest, OneSuiteOneCasePerExpectationWithCountsAndTimes) {
  const std::string xml = junit_xml(suite());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"collide\" tests=\"3\" "
                      "failures=\"1\" errors=\"1\" skipped=\"0\" time=\"12.346\">",
                      0),
            0u)
      << xml;
  EXPECT_NE(xml.find("<testsuite name=\"gates &lt;nightly&gt;\" tests=\"3\" failures=\"1\" errors=\"1\" "
                     "skipped=\"0\" time=\"12.346\" timestamp=\"2026-11-25T19:30:13\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<property name=\"scenario\" value=\"configs/a&amp;b.yaml\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<testcase name=\"loss: slowdown &lt; 2x\" classname=\"collide.gates &lt;nightly&gt;\" "
                     "time=\"0.000\">\n      <system-out>measured: 1.5x</system-out>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"busbw 40.0% of line rate is below 80%&#10;second line\" "
                     "type=\"expectation\">measured: 40.0%&#10;busbw 40.0%"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<error message=\"variant &apos;flap&apos; has no results\" type=\"not-evaluated\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<system-err>agent h1 &lt;went&gt; away</system-err>"), std::string::npos);
  EXPECT_EQ(xml.substr(xml.size() - 29), "  </testsuite>\n</testsuites>\n");
}

TEST(JUnitXmlTest, WritesAtomicallyOverAnEarlierFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("collide-junit-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "junit.xml";
  std::ofstream(path) << "old";
  ASSERT_TRUE(write_file_atomically(path, "new text").ok());
  std::stringstream read;
  read << std::ifstream(path).rdbuf();
  EXPECT_EQ(read.str(), "new text");
  // Nothing else is left beside it, and a folder that is not there is an error that names it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  const Status missing = write_file_atomically(dir / "no" / "such.xml", "x");
  EXPECT_THAT(missing, StatusIs(StatusCode::kUnavailable));
  EXPECT_NE(missing.message().find("no/such.xml"), std::string::npos) << missing.message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collide::orchestrator::report
