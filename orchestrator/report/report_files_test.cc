#include "orchestrator/report/report_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::report {
namespace {

class ReportFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("collide-report-files-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    RunResult r;
    r.variant = "baseline";
    runs_.push_back(r);
    report_ = build_report("files", runs_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::vector<RunResult> runs_;
  Report report_;
};

TEST_F(ReportFilesTest, HtmlFalseWritesTheJsonAndNoPage) {
  v1::Outputs outputs;
  outputs.set_html(false);
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "report.html") << "an earlier run's page";
  auto files = write_report_files(dir_, outputs, report_, runs_);
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  EXPECT_TRUE(files->html.empty());
  EXPECT_TRUE(std::filesystem::exists(dir_ / "report.json"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "report.html"));
}

TEST_F(ReportFilesTest, HtmlTrueOrUnsetWritesThePage) {
  for (const bool set : {true, false}) {
    v1::Outputs outputs;
    if (set) outputs.set_html(true);
    std::filesystem::remove_all(dir_);
    auto files = write_report_files(dir_, outputs, report_, runs_);
    ASSERT_TRUE(files.ok()) << files.status().to_string();
    EXPECT_EQ(files->html, dir_ / "report.html");
    EXPECT_GT(std::filesystem::file_size(dir_ / "report.html"), 0u);
    EXPECT_TRUE(std::filesystem::exists(dir_ / "report.json"));
  }
}

// Something in a report file's place that cannot be written over (here a directory) is an error
// that names the file; so is an earlier page that a run without pages cannot remove.
TEST_F(ReportFilesTest, AReportFileThatCannotBeWrittenIsAnErrorNamingIt) {
  for (const std::string name : {"report.json", "report.html"}) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / name / "inside");
    auto files = write_report_files(dir_, v1::Outputs(), report_, runs_);
    ASSERT_THAT(files, StatusIs(StatusCode::kUnavailable)) << name;
    EXPECT_NE(files.status().message().find((dir_ / name).string()), std::string::npos)
        << files.status().to_string();
  }
  v1::Outputs no_page;
  no_page.set_html(false);
  auto files = write_report_files(dir_, no_page, report_, runs_);
  ASSERT_THAT(files, StatusIs(StatusCode::kUnavailable));
  EXPECT_NE(files.status().message().find("report.html"), std::string::npos) << files.status().to_string();
}

}  // namespace
}  // namespace collide::orchestrator::report
