#include "orchestrator/report/report_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "orchestrator/report/html_report.h"

namespace collide::orchestrator::report {

Status write_report_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out.good()) return unavailable("cannot write " + path.string() + ": " + std::strerror(errno));
  return {};
}

Result<ReportFiles> write_report_files(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                       const Report& report, const std::vector<RunResult>& runs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return unavailable("cannot create " + dir.string() + ": " + ec.message());
  ReportFiles files;
  files.json = dir / "report.json";
  COLLIDE_RETURN_IF_ERROR(write_report_text(files.json, results_json(report) + "\n"));
  auto html = write_report_page(dir, outputs, [&] { return render_html(report, runs); });
  if (!html.ok()) return html.status();
  files.html = *html;
  return files;
}

Result<std::filesystem::path> write_report_page(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                                const std::function<std::string()>& render) {
  const std::filesystem::path page = dir / "report.html";
  // Unset means yes: the page is the report people read.
  if (!outputs.has_html() || outputs.html()) {
    COLLIDE_RETURN_IF_ERROR(write_report_text(page, render()));
    return page;
  }
  // A page from an earlier run would mislead: one that cannot be removed is an error.
  std::error_code ec;
  std::filesystem::remove(page, ec);
  if (ec) return unavailable("cannot remove an earlier " + page.string() + ": " + ec.message());
  return std::filesystem::path();
}

}  // namespace collide::orchestrator::report
