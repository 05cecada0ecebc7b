// The HTML report as a person sees it: headless Chromium loads the file offline, the DOM it builds
// holds the summary table and both charts, and it renders a screenshot.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/process.h"
#include "orchestrator/report/html_report.h"
#include "tests/support/privileged.h"

namespace collide::orchestrator::report {
namespace {

RunResult run(const std::string& variant, double us) {
  RunResult r;
  r.variant = variant;
  uint64_t t = 0;
  for (int k = 0; k < 20; ++k) {
    for (uint32_t rank = 0; rank < 4; ++rank) {
      OpTiming op;
      op.rank = rank;
      op.op_index = static_cast<uint64_t>(k);
      op.kind = v1::OP_KIND_ALL_REDUCE;
      op.comm = "world";
      op.comm_size = 4;
      op.bytes = 1 << 20;
      op.start_ns = t;
      op.end_ns = t + static_cast<uint64_t>(us * 1000 * (1 + 0.01 * k));
      r.ops.push_back(op);
    }
    t += static_cast<uint64_t>(us * 1000 * 1.3);
  }
  return r;
}

std::vector<std::string> chromium(const std::filesystem::path& profile) {
  // Flags for a closed network: no background fetches, no first-run work, no sandbox as root.
  return {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
          "--no-first-run", "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--user-data-dir=" + profile.string()};
}

TEST(HtmlReportBrowserTest, ChromiumRendersTablesAndCharts) {
  COLLIDE_REQUIRE(collide::testing::missing_tool("chromium"));
  const auto dir = std::filesystem::temp_directory_path() / ("collide-html-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<RunResult> runs = {run("baseline", 100), run("lossy", 180)};
  runs[1].faults.push_back({"lossy-h1", "loss", 500'000, 1'500'000, 1000, 10});
  const std::string html = (dir / "report.html").string();
  std::ofstream(html) << render_html(build_report("browser", runs), runs);

  auto dom_args = chromium(dir / "profile");
  dom_args.push_back("--dump-dom");
  dom_args.push_back("file://" + html);
  auto dom = process::run_command(dom_args);
  ASSERT_TRUE(dom.ok());
  ASSERT_EQ(dom->exit_code, 0) << dom->output;
  EXPECT_NE(dom->output.find("<table id=\"summary\">"), std::string::npos);
  EXPECT_NE(dom->output.find("id=\"cdf\""), std::string::npos);
  EXPECT_NE(dom->output.find("data-variant=\"lossy\""), std::string::npos);
  EXPECT_NE(dom->output.find("id=\"timeline-lossy\""), std::string::npos);
  EXPECT_NE(dom->output.find("class=\"fault\""), std::string::npos);

  auto shot_args = chromium(dir / "profile");
  const std::string png = (dir / "report.png").string();
  shot_args.push_back("--window-size=1100,1400");
  shot_args.push_back("--screenshot=" + png);
  shot_args.push_back("file://" + html);
  auto shot = process::run_command(shot_args);
  ASSERT_TRUE(shot.ok());
  ASSERT_TRUE(std::filesystem::exists(png)) << shot->output;
  EXPECT_GT(std::filesystem::file_size(png), 20'000u) << "a blank page compresses smaller";
  std::filesystem::remove_all(dir);
}

// Laid out, not only present: a page of the test's own loads the report in a frame and measures
// what Chromium drew (bounding boxes of the CDF lines, the fault shading and the op bars).
TEST(HtmlReportBrowserTest, ChartsHaveGeometry) {
  COLLIDE_REQUIRE(collide::testing::missing_tool("chromium"));
  const auto dir = std::filesystem::temp_directory_path() / ("collide-html-geom-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<RunResult> runs = {run("baseline", 100), run("lossy", 180), run("flap", 250)};
  runs[1].faults.push_back({"lossy-h1", "loss", 500'000, 1'500'000, 1000, 10});
  runs[2].faults.push_back({"flap-a", "link_flap", 200'000, 400'000, 0, 0});
  runs[2].faults.push_back({"flap-b", "link_flap", 2'000'000, 2'100'000, 0, 0});
  // The baseline ran on a fabric: one host under one leaf under one spine.
  FabricLink host, uplink;
  host.name = "h0.nic0-leaf0";
  host.lower = "h0.nic0";
  host.upper = uplink.lower = "leaf0";
  host.host_link = true;
  uplink.name = "leaf0-spine0";
  uplink.upper = "spine0";
  host.lower_end.tx_bytes = uplink.lower_end.tx_bytes = 1'000'000;
  runs[0].fabric_links = {host, uplink};
  std::ofstream(dir / "report.html") << render_html(build_report("geometry", runs), runs);
  std::ofstream(dir / "measure.html") << R"(<!DOCTYPE html><html><body>
<iframe id="r" src="report.html" width="1200" height="3000"></iframe><pre id="out">pending</pre>
<script>
document.getElementById('r').onload = () => {
  const d = document.getElementById('r').contentDocument;
  const drawn = (sel) => [...d.querySelectorAll(sel)].filter(e => {
    const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length;
  document.getElementById('out').textContent =
    `svg=${d.querySelectorAll('svg').length} cdf_lines=${drawn('#cdf polyline.cdf-line')} ` +
    `faults=${drawn('svg.timeline rect.fault')} ops=${drawn('svg.timeline rect.op')} ` +
    `iteration_bars=${drawn('#iterations rect.bar')} ` +
    `topology_links=${[...d.querySelectorAll('svg.topology line.link')].filter(e => {
      const b = e.getBoundingClientRect(); return b.width > 0 || b.height > 0; }).length} ` +
    `topology_nodes=${drawn('svg.topology g.node rect')}`;
};
</script></body></html>)";
  auto args = chromium(dir / "profile");
  for (const char* a : {"--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom"}) args.push_back(a);
  args.push_back("file://" + (dir / "measure.html").string());
  auto dom = process::run_command(args);
  ASSERT_TRUE(dom.ok());
  ASSERT_EQ(dom->exit_code, 0) << dom->output;
  // Three variants: three CDF lines, three timelines holding three fault windows and 3 x 20 x 4
  // op bars, one iteration bar each.
  EXPECT_NE(dom->output.find("cdf_lines=3 faults=3 ops=240 iteration_bars=3 topology_links=2 topology_nodes=3"),
            std::string::npos)
      << dom->output;
  // Five charts and the baseline's fabric.
  EXPECT_NE(dom->output.find("svg=6 "), std::string::npos) << dom->output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collide::orchestrator::report
