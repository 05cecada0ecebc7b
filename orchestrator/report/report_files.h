#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/report/report.h"

// Where a run's answers go: report.json always, report.html unless the scenario's outputs say
// `html: false`.
namespace collide::orchestrator::report {

struct ReportFiles {
  std::filesystem::path json;
  std::filesystem::path html;  // empty when not written
};

// Writes one report file whole; an error names the file and why.
Status write_report_text(const std::filesystem::path& path, const std::string& text);

// report.html in `dir` as `render` makes it, unless `outputs` say `html: false` (then an earlier
// one is removed, and the path returned is empty).
Result<std::filesystem::path> write_report_page(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                                const std::function<std::string()>& render);

Result<ReportFiles> write_report_files(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                       const Report& report, const std::vector<RunResult>& runs);

}  // namespace collide::orchestrator::report
