#pragma once

#include <filesystem>
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

Result<ReportFiles> write_report_files(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                       const Report& report, const std::vector<RunResult>& runs);

}  // namespace collide::orchestrator::report
