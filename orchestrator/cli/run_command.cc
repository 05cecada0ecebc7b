// `collide run scenario.yaml`: from a scenario to an answer — what did the faults do to the job?
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "orchestrator/cli/commands.h"
#include "orchestrator/report/html_report.h"
#include "orchestrator/report/report.h"
#include "orchestrator/run/local_runner.h"
#include "orchestrator/scenario/scenario.h"

namespace collide::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::string output;
  double timeout_s = 600;
};

std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "collide" : p.string();
}

void run(const RunOptions& opt) {
  auto scenario = orchestrator::load_scenario(opt.scenario);
  if (!scenario.ok()) fail("run", kExitUsage, scenario.status().message());
  const std::filesystem::path out = opt.output.empty() ? scenario->outputs().directory() : opt.output;
  std::filesystem::create_directories(out);
  orchestrator::LocalRunOptions local;
  local.collide_binary = self_path();
  local.work_dir = out / "work";
  local.run_timeout_s = opt.timeout_s;
  local.progress = [](const std::string& line) { std::cerr << "collide run: " << line << "\n"; };
  auto runs = orchestrator::run_locally(*scenario, local);
  if (!runs.ok()) fail("run", kExitFailed, runs.status().message());

  const auto report = orchestrator::report::build_report(scenario->name(), *runs);
  std::ofstream(out / "report.json") << orchestrator::report::report_json(report).dump(2) << "\n";
  std::ofstream(out / "report.html") << orchestrator::report::render_html(report, *runs);

  std::cout << fmt::format("{:<26} {:>5} {:>7} {:>11} {:>22} {:>11} {:>11} {:>9}\n", "variant",
                           "runs", "failed", "JCT (s)", "slowdown (95% CI)", "p50 (us)",
                           "p99 (us)", "resent");
  for (const auto& v : report.variants) {
    const std::string slowdown =
        v.slowdown.n > 0 ? fmt::format("{:.2f}x ({:.2f}..{:.2f})", v.slowdown.mean,
                                       v.slowdown.low, v.slowdown.high)
                         : "-";
    std::cout << fmt::format("{:<26} {:>5} {:>7} {:>11.4f} {:>22} {:>11.0f} {:>11.0f} {:>9}\n",
                             v.name, v.runs, v.failed_runs, v.jct.mean, slowdown, v.p50_us,
                             v.p99_us, v.retransmitted_packets);
    for (const auto& f : v.failures) std::cout << "  failed " << f << "\n";
  }
  std::cout << fmt::format("\nreport: {}\n        {}\n", (out / "report.html").string(),
                           (out / "report.json").string());
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a scenario: build its testbed, replay baseline and faulted runs, report");
  cmd->add_option("scenario", opt->scenario, "scenario YAML (e.g. configs/demo.yaml)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--output", opt->output, "where results go (default: the scenario's outputs)");
  cmd->add_option("--run-timeout", opt->timeout_s, "seconds one run may take")->capture_default_str();
  cmd->callback([opt] { run(*opt); });
}

}  // namespace collide::cli
