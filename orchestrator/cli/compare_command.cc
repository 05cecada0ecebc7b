// `collide compare A B`: two runs' report.json side by side, as ratios B / A with intervals over
// repetitions and a verdict per variant, collective kind and size.
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "orchestrator/cli/commands.h"
#include "orchestrator/report/compare.h"
#include "orchestrator/report/compare_gates.h"
#include "orchestrator/report/compare_output.h"
#include "orchestrator/report/compare_sweeps.h"
#include "orchestrator/report/junit_xml.h"

namespace collide::cli {
namespace {

namespace report = orchestrator::report;

struct CompareOptions {
  std::string a, b;
  double level = 0.95;
  std::string html, json;
  std::vector<std::string> expect;  // gates, e.g. "no-worse", "jct-ratio-below=1.2"
  std::string junit;                // where the gates go as JUnit XML, empty: nowhere
};

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) fail("compare", kExitFailed, fmt::format("{}: cannot write it", path));
}

report::JUnitSuite gate_suite(const std::string& name, const report::Comparison& c, const report::CompareGates& gates,
                              const CompareOptions& opt, std::chrono::system_clock::time_point started) {
  report::JUnitSuite suite;
  suite.name = name;
  suite.timestamp = fmt::format("{:%Y-%m-%dT%H:%M:%S}",
                                fmt::gmtime(std::chrono::system_clock::to_time_t(started)));
  suite.seconds = std::chrono::duration<double>(std::chrono::system_clock::now() - started).count();
  suite.properties = {{"a", c.a_label}, {"b", c.b_label}, {"level", fmt::format("{:g}", opt.level)}};
  suite.cases = report::judge_comparison(c, gates);
  return suite;
}

// The gates judged and printed (a suite per compared point for two sweeps), and written as JUnit
// XML when asked; false when one does not hold or the JUnit file cannot be written.
bool judge_gates(const std::vector<report::JUnitSuite>& suites, const CompareOptions& opt) {
  bool hold = true;
  for (const report::JUnitSuite& suite : suites) {
    if (suites.size() > 1) std::cout << "\n" << suite.name << ":\n";
    std::cout << report::expectations_summary(suite.cases);
    hold = hold && report::all_hold(suite.cases);
  }
  if (!opt.junit.empty()) {
    if (Status s = report::write_file_atomically(opt.junit, report::junit_xml(suites)); !s.ok()) {
      std::cerr << "collide compare: " << s.message() << "\n";
      hold = false;
    }
  }
  return hold;
}

// Two sweeps: each point of A against B's point of the same values, the gates judged per point.
void run_sweep_compare(const CompareOptions& opt, const report::CompareGates& gates,
                       std::chrono::system_clock::time_point started) {
  auto c = report::compare_sweeps(opt.a, opt.b, opt.level);
  if (!c.ok()) fail("compare", kExitUsage, c.status().message());
  if (!opt.html.empty()) write_file(opt.html, report::sweep_comparison_html(*c));
  if (!opt.json.empty()) write_file(opt.json, report::sweep_comparison_json(*c).dump(2) + "\n");
  std::cout << report::sweep_comparison_text(*c);
  if (!gates.any()) return;
  std::vector<report::JUnitSuite> suites;
  for (const report::PointComparison& p : c->points) {
    suites.push_back(gate_suite(fmt::format("collide compare [{}]", p.label), p.comparison, gates, opt, started));
  }
  // A point of one sweep only cannot be judged: an error, never a pass.
  if (!c->not_compared.empty()) {
    report::JUnitSuite missing;
    missing.name = "collide compare (points not compared)";
    missing.timestamp = suites.front().timestamp;
    for (const auto& [label, why] : c->not_compared) {
      missing.cases.push_back({"point " + label, report::Verdict::kError, "", why});
    }
    suites.push_back(std::move(missing));
  }
  if (!judge_gates(suites, opt)) fail("compare", kExitFailed, "not every gate holds (see above)");
}

void run_compare(const CompareOptions& opt) {
  const auto started = std::chrono::system_clock::now();
  report::CompareGates gates;
  for (const std::string& gate : opt.expect) {
    if (Status s = report::parse_compare_gate(gate, gates); !s.ok()) fail("compare", kExitUsage, s.message());
  }
  if (!opt.junit.empty() && !gates.any()) {
    fail("compare", kExitUsage, "--junit writes the gates: give at least one --expect");
  }
  const bool a_sweep = report::is_sweep(opt.a), b_sweep = report::is_sweep(opt.b);
  if (a_sweep != b_sweep) {
    fail("compare", kExitUsage,
         fmt::format("{} is a sweep (sweep.json) and {} a single run: compare two sweeps or two runs",
                     a_sweep ? "A" : "B", a_sweep ? "B" : "A"));
  }
  if (a_sweep) {
    run_sweep_compare(opt, gates, started);
    return;
  }
  auto a = report::read_results(opt.a);
  if (!a.ok()) fail("compare", kExitUsage, "A: " + a.status().message());
  auto b = report::read_results(opt.b);
  if (!b.ok()) fail("compare", kExitUsage, "B: " + b.status().message());
  const report::Comparison c = report::compare_results(*a, *b, opt.level, opt.a, opt.b);
  // Files first: a path that cannot be written fails the command before stdout claims success.
  if (!opt.html.empty()) write_file(opt.html, report::comparison_html(c, *a, *b));
  if (!opt.json.empty()) write_file(opt.json, report::comparison_json(c).dump(2) + "\n");
  std::cout << report::comparison_text(c);
  if (gates.any() && !judge_gates({gate_suite("collide compare", c, gates, opt, started)}, opt)) {
    fail("compare", kExitFailed, "not every gate holds (see above)");
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto opt = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare two runs (two switches, firmware versions, transports ...): per variant, collective "
      "kind and size, B's median and p99 completion times and JCT over A's, with intervals over "
      "repetitions and a verdict: better, worse or no detectable difference");
  cmd->add_option("A", opt->a,
                  "the first run: its results directory or report.json; or a sweep's results directory "
                  "(or sweep.json), then B is a sweep too and each point is compared with B's point of "
                  "the same values")
      ->required();
  cmd->add_option("B", opt->b, "the second run, compared against A (ratios are B / A)")->required();
  cmd->add_option("--level", opt->level, "confidence level of the intervals and verdicts")
      ->check(CLI::Range(0.5, 0.999))
      ->capture_default_str();
  cmd->add_option("--html", opt->html, "also write the two runs side by side as an HTML page");
  cmd->add_option("--json", opt->json, "also write the comparison as JSON");
  cmd->add_option("--expect", opt->expect,
                  "a gate on B against A as a stored baseline, per variant (repeatable): no-worse "
                  "(no JCT, p50 or p99 detectably worse at --level) or jct-ratio-below=RATIO (the "
                  "upper end of the JCT ratio's interval); exit 1 when one fails or cannot be judged")
      ->type_name("GATE");
  cmd->add_option("--junit", opt->junit, "write the gates as JUnit XML to FILE (one case per gate and variant)")
      ->type_name("FILE");
  cmd->footer(
      "Each repetition is one measurement (its median, its p99, its JCT): the collectives of one "
      "run share its machine's load, so intervals are Student's t over repetitions, on the log "
      "scale. At least 2 repetitions on one side and 3 in all are needed for a verdict. A "
      "variant's JCT over its repetition's baseline JCT (run just before it) is compared too: "
      "load that lasts through a whole run cancels in it.");
  cmd->callback([opt] { run_compare(*opt); });
}

}  // namespace collide::cli
