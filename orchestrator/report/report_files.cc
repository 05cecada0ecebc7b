#include "orchestrator/report/report_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "orchestrator/report/html_report.h"

namespace collide::orchestrator::report {
namespace {

Status write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out.good()) return unavailable("cannot write " + path.string() + ": " + std::strerror(errno));
  return {};
}

}  // namespace

Result<ReportFiles> write_report_files(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                       const Report& report, const std::vector<RunResult>& runs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return unavailable("cannot create " + dir.string() + ": " + ec.message());
  ReportFiles files;
  files.json = dir / "report.json";
  COLLIDE_RETURN_IF_ERROR(write_text(files.json, results_json(report) + "\n"));
  // Unset means yes: the page is the report people read.
  if (!outputs.has_html() || outputs.html()) {
    files.html = dir / "report.html";
    COLLIDE_RETURN_IF_ERROR(write_text(files.html, render_html(report, runs)));
  } else {
    // A page from an earlier run would mislead: one that cannot be removed is an error.
    std::filesystem::remove(dir / "report.html", ec);
    if (ec) return unavailable("cannot remove an earlier " + (dir / "report.html").string() + ": " + ec.message());
  }
  return files;
}

}  // namespace collide::orchestrator::report
