// `collide compare A B`: two runs' report.json side by side, as ratios B / A with intervals over
// repetitions and a verdict per variant, collective kind and size.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "orchestrator/cli/commands.h"
#include "orchestrator/report/compare.h"
#include "orchestrator/report/compare_output.h"

namespace collide::cli {
namespace {

namespace report = orchestrator::report;

struct CompareOptions {
  std::string a, b;
  double level = 0.95;
  std::string html, json;
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) fail("compare", kExitFailed, fmt::format("{}: cannot write it", path));
}

void run_compare(const CompareOptions& opt) {
  auto a = report::read_results(opt.a);
  if (!a.ok()) fail("compare", kExitUsage, "A: " + a.status().message());
  auto b = report::read_results(opt.b);
  if (!b.ok()) fail("compare", kExitUsage, "B: " + b.status().message());
  const report::Comparison c = report::compare_results(*a, *b, opt.level, opt.a, opt.b);
  // Files first: a path that cannot be written fails the command before stdout claims success.
  if (!opt.html.empty()) write_file(opt.html, report::comparison_html(c, *a, *b));
  if (!opt.json.empty()) write_file(opt.json, report::comparison_json(c).dump(2) + "\n");
  std::cout << report::comparison_text(c);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto opt = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two runs (two switches, firmware versions, transports ...): per variant, collective "
      "kind and size, B's median and p99 completion times and JCT over A's, with intervals over "
      "repetitions and a verdict: better, worse or no detectable difference");
  cmd->add_option("A", opt->a, "the first run: its results directory or report.json")->required();
  cmd->add_option("B", opt->b, "the second run, compared against A (ratios are B / A)")->required();
  cmd->add_option("--level", opt->level, "confidence level of the intervals and verdicts")
      ->check(CLI::Range(0.5, 0.999))
      ->capture_default_str();
  cmd->add_option("--html", opt->html, "also write the two runs side by side as an HTML page");
  cmd->add_option("--json", opt->json, "also write the comparison as JSON");
  cmd->footer(
      "Each repetition is one measurement (its median, its p99, its JCT): the collectives of one "
      "run share its machine's load, so intervals are Student's t over repetitions, on the log "
      "scale. At least 2 repetitions on one side and 3 in all are needed for a verdict. A "
      "variant's JCT over its repetition's baseline JCT (run just before it) is compared too: "
      "load that lasts through a whole run cancels in it.");
  cmd->callback([opt] { run_compare(*opt); });
}

}  // namespace collide::cli
