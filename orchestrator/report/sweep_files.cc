#include "orchestrator/report/sweep_files.h"

#include "orchestrator/report/curve_svg.h"
#include "orchestrator/report/report_files.h"
#include "orchestrator/report/sweep_report.h"
#include "orchestrator/report/svg_png.h"

namespace collide::orchestrator::report {

Result<SweepFiles> write_sweep_files(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                     v1::SweepResults sweep) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return unavailable("cannot create " + dir.string() + ": " + ec.message());
  SweepFiles files;
  const std::vector<CurveChart> charts = sweep_charts(sweep);
  sweep.clear_curve_files();
  if (png_rendering_available()) {
    for (const CurveChart& chart : charts) {
      const std::filesystem::path png = dir / (chart.id + ".png");
      COLLIDE_RETURN_IF_ERROR(write_svg_png(curve_svg(chart), png));
      files.pngs.push_back(png);
      sweep.add_curve_files(png.filename().string());
    }
  } else {
    files.png_note = "no PNG curves: collide was built without librsvg (librsvg2-dev); they are in report.html";
  }
  files.json = dir / "sweep.json";
  COLLIDE_RETURN_IF_ERROR(write_report_text(files.json, sweep_json(sweep) + "\n"));
  auto html = write_report_page(dir, outputs, [&] { return render_sweep_html(sweep, charts); });
  if (!html.ok()) return html.status();
  files.html = *html;
  return files;
}

}  // namespace collide::orchestrator::report
