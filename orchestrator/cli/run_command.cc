// `collide run scenario.yaml`: from a scenario to an answer — what did the faults do to the job?
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "injectors/guardian.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/start_sweep.h"
#include "orchestrator/metrics/http_endpoint.h"
#include "orchestrator/report/report_files.h"
#include "orchestrator/report/report.h"
#include "orchestrator/report/run_gates.h"
#include "orchestrator/report/run_log.h"
#include "orchestrator/report/soak_hours.h"
#include "orchestrator/report/text_summary.h"
#include "orchestrator/run/local_runner.h"
#include "orchestrator/scenario/jobs.h"
#include "orchestrator/scenario/scenario.h"
#include "orchestrator/scenario/sweep_grid.h"
#include "orchestrator/report/flap_survival.h"
#include "orchestrator/report/sweep_files.h"
#include "orchestrator/report/sweep_report.h"

namespace collide::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::string output;
  double timeout_s = 600;
  std::string certs;
  double lease_s = 5;
  std::string metrics;  // host:port of a Prometheus endpoint, empty: none
  std::string junit;    // where the expectations go as JUnit XML, empty: nowhere
};

// SIGTERM or SIGINT: the run in progress stops on every agent, faults are disarmed, the testbed
// and agents are taken down, the partial report is written, and collide exits with a failure.
std::atomic<bool> g_interrupted{false};

void on_signal(int) { g_interrupted.store(true); }

std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "collide" : p.string();
}

// The scenario's expectations judged and printed (and written as JUnit XML when the gate names a
// file); `all_hold` false when one does not hold or the JUnit file cannot be written. `results` is
// null when the run failed before it had any.
orchestrator::report::GateVerdict judge_expectations(const v1::Scenario& scenario, const v1::Results* results,
                                                     const std::string& failure,
                                                     const orchestrator::report::GateRun& gate) {
  auto verdict = orchestrator::report::judge_run(scenario, results, failure, gate);
  std::cout << verdict.summary;
  if (!verdict.junit.ok()) std::cerr << "collide run: " << verdict.junit.message() << "\n";
  verdict.all_hold = verdict.all_hold && verdict.junit.ok();
  return verdict;
}

// Which runs failed and why ("baseline (repetition 1): host 0: ..."), empty when none did. A
// failed run (a replay that failed, a job that did not finish) fails the whole `collide run`, even
// though its results went into the report like the others. The counts are the report's; `runs`
// may hold only some of the failed runs (a soak's), and the rest are counted.
std::string failed_runs(const orchestrator::report::Report& report,
                        const std::vector<orchestrator::report::RunResult>& runs) {
  size_t total = 0, failed = 0, listed = 0;
  for (const auto& v : report.variants) {
    total += v.runs;
    failed += v.failed_runs;
  }
  if (failed == 0) return "";
  std::string out;
  for (const auto& r : runs) {
    if (!r.failed) continue;
    ++listed;
    std::string why = r.failure;
    while (!why.empty() && (why.back() == ' ' || why.back() == ';')) why.pop_back();
    out += fmt::format("\n  {} (repetition {}): {}", r.variant, r.repetition + 1, why);
  }
  if (listed < failed) out += fmt::format("\n  ... and {} more (runs.jsonl has each)", failed - listed);
  return fmt::format("{} of {} run(s) failed:{}", failed, total, out);
}

// Several jobs at once: where each job's ranks are, for its own JCT in the report.
std::vector<orchestrator::report::JobRanks> job_ranks(const v1::Scenario& scenario) {
  std::vector<orchestrator::report::JobRanks> jobs;
  for (const v1::Job& job : scenario.jobs()) {
    jobs.push_back({job.name(),
                    {job.hosts().begin(), job.hosts().end()},
                    orchestrator::job_global_ranks(job, scenario.testbed().ranks_per_host()),
                    scenario.runs().alone() ? orchestrator::alone_variant(job.name()) : "",
                    orchestrator::variants_faulting(scenario, job)});
  }
  return jobs;
}

// What one scenario run (a whole scenario, or one point of a sweep) came to.
struct PointOutcome {
  bool ran = false;  // false: it could not run at all, `failure` says why
  orchestrator::report::Report report;
  std::string failure;  // failed runs, an agent's failure, a testbed left behind, unwritten files
  bool hold = true;     // every expectation holds
  orchestrator::report::JUnitSuite gates;  // the expectations' verdicts as a JUnit suite
};

// What a soak's report keeps of a run it does not keep whole: the first run of each variant (its
// timeline in the HTML report), and of a failed run what the failure list says (up to 100).
void keep_for_soak_report(const orchestrator::report::RunResult& run,
                          std::vector<orchestrator::report::RunResult>& shown) {
  constexpr size_t kFailedRunsShown = 100;
  const bool first = std::none_of(shown.begin(), shown.end(), [&](const auto& r) { return r.variant == run.variant; });
  if (first) {
    shown.push_back(run);
    return;
  }
  const auto failed = std::count_if(shown.begin(), shown.end(), [](const auto& r) { return r.failed; });
  if (!run.failed || static_cast<size_t>(failed) >= kFailedRunsShown) return;
  orchestrator::report::RunResult head;
  head.variant = run.variant;
  head.repetition = run.repetition;
  head.failed = true;
  head.failure = run.failure;
  shown.push_back(std::move(head));
}

// Runs a scenario into `out`: its report files written, its summary and expectations printed.
PointOutcome run_point(const v1::Scenario& scenario, const std::vector<v1::SweepSetting>& settings,
                       const std::filesystem::path& out, orchestrator::LocalRunOptions local,
                       const orchestrator::report::GateRun& gate) {
  PointOutcome point;
  local.work_dir = out / "work";
  // Each run goes to runs.jsonl as it ends: what a soak stopped or killed hours in keeps.
  std::error_code made;
  std::filesystem::create_directories(out, made);  // a sweep's point folder is new
  auto run_log = orchestrator::report::RunLog::create(out / "runs.jsonl");
  if (!run_log.ok()) {
    point.gates = judge_expectations(scenario, nullptr, run_log.status().message(), gate).suite;
    point.failure = run_log.status().message();
    return point;
  }
  std::string run_log_failure;
  // A soak's report is built as its runs end, and keeps of them only what its limits allow, with
  // the first run of each variant (its timeline) and the heads of failed runs; a scenario of
  // several jobs keeps every run (its per-job results read them).
  const bool soak = scenario.runs().duration_ns() != 0;
  const std::vector<orchestrator::report::JobRanks> jobs = job_ranks(scenario);
  orchestrator::report::ReportBuilder builder(
      scenario.name(), soak ? orchestrator::report::kSoakReportLimits : orchestrator::report::ReportLimits{});
  orchestrator::report::SoakHours hours;
  std::vector<orchestrator::report::RunResult> soak_runs_shown;
  local.keep_runs = !soak || !jobs.empty();
  local.run_finished = [&](const orchestrator::report::RunResult& run, uint32_t iteration) {
    const orchestrator::report::RunLogEntry entry = orchestrator::report::run_log_entry(run, iteration);
    hours.add(entry);
    builder.add(run);
    if (!local.keep_runs) keep_for_soak_report(run, soak_runs_shown);
    if (!run_log_failure.empty()) return;  // said once; the report still gets every run
    const Status appended = run_log->append(entry);
    if (!appended.ok()) {
      run_log_failure = appended.message();
      std::cerr << "collide run: " << run_log_failure << "\n";
    }
  };
  auto outcome = orchestrator::run_locally(scenario, local);
  if (!outcome.ok()) {
    point.gates = judge_expectations(scenario, nullptr, outcome.status().message(), gate).suite;
    point.failure = outcome.status().message();
    return point;
  }
  point.ran = true;
  const std::vector<orchestrator::report::RunResult>& runs = local.keep_runs ? outcome->runs : soak_runs_shown;
  point.report = std::move(builder).finish(jobs, runs);
  point.report.description = scenario.description();
  point.report.sweep_point = settings;
  if (soak) point.report.hours = hours.rows();
  const v1::Results results = orchestrator::report::to_results(point.report);
  auto files = orchestrator::report::write_report_files(out, scenario.outputs(), point.report, runs);
  if (!files.ok()) {
    const auto verdict = judge_expectations(scenario, &results, files.status().message(), gate);
    point.hold = verdict.all_hold;
    point.gates = verdict.suite;
    point.failure = files.status().message();
    return point;
  }
  std::cout << orchestrator::report::run_summary(point.report, files->html.string(), files->json.string());
  std::cout << "runs:   " << run_log->path().string() << "\n";
  point.failure = !outcome->agent_failure.empty() ? outcome->agent_failure : failed_runs(point.report, runs);
  for (const std::string* more : {&outcome->teardown_failure, &run_log_failure}) {
    if (!more->empty()) point.failure += (point.failure.empty() ? "" : "\n") + *more;
  }
  const auto verdict = judge_expectations(scenario, &results, point.failure, gate);
  point.hold = verdict.all_hold;
  point.gates = verdict.suite;
  return point;
}

// A sweep's JUnit file, rewritten whole after each point so that a sweep stopped half way leaves
// the verdicts of the points that ran. False (and said why) when it cannot be written.
bool write_sweep_junit(const std::filesystem::path& path, const std::vector<orchestrator::report::JUnitSuite>& suites) {
  if (path.empty()) return true;
  const Status written = orchestrator::report::write_file_atomically(path, orchestrator::report::junit_xml(suites));
  if (!written.ok()) std::cerr << "collide run: " << written.message() << "\n";
  return written.ok();
}

// Each point of the grid runs as a scenario of its own into point-<k>/, then the sweep's files
// (sweep.json, report.html with the curves, the curves as PNG) go beside them. With --junit, each
// point's expectations are a suite of their own, named after the point, and a last suite says
// whether every point ran and, in a flap-duration sweep, whether the survival limit agrees.
void run_sweep(const orchestrator::ScenarioGrid& grid, const std::filesystem::path& out,
               const orchestrator::LocalRunOptions& local, const orchestrator::report::GateRun& gate) {
  const v1::Scenario& first = grid.points.front().scenario;
  v1::SweepResults sweep;
  sweep.set_scenario(first.name());
  sweep.set_description(first.description());
  for (const auto& f : grid.fields) sweep.add_fields(f.field);
  std::string failures, interrupted;
  bool hold = true, junit_written = true;
  std::vector<orchestrator::report::JUnitSuite> suites;
  for (size_t k = 0; k < grid.points.size(); ++k) {
    const orchestrator::SweepPoint& at = grid.points[k];
    const std::string directory = fmt::format("point-{}", k + 1);
    const std::string label = orchestrator::point_label(at.settings);
    std::cerr << fmt::format("collide run: sweep point {} of {}: {}\n", k + 1, grid.points.size(), label);
    // The point's verdicts go into the sweep's file, not a file of their own.
    const orchestrator::report::GateRun point_gate{gate.scenario_path, {}, std::chrono::system_clock::now()};
    PointOutcome point = run_point(at.scenario, at.settings, out / directory, local, point_gate);
    point.gates.name = fmt::format("{} [{}]", first.name(), label);
    point.gates.properties.emplace_back("point", directory);
    suites.push_back(std::move(point.gates));
    junit_written = write_sweep_junit(gate.junit, suites) && junit_written;
    v1::SweepPointResults results;
    if (point.ran) {
      results = orchestrator::report::sweep_point_results(point.report, directory);
    } else {
      for (const auto& s : at.settings) *results.add_settings() = s;
      results.set_directory(directory);
    }
    results.set_failure(point.failure);
    *sweep.add_points() = std::move(results);
    hold = hold && point.hold;
    if (local.interrupted != nullptr && local.interrupted->load()) {
      interrupted = fmt::format("\n  interrupted after point {} of {}", k + 1, grid.points.size());
      break;
    }
  }
  // In a flap-duration sweep the flap's variant dying of exceeded retries is what is measured,
  // not a failure of the sweep; whether the limit found agrees with the arithmetic is.
  const auto survival = orchestrator::report::flap_survival(first, sweep);
  for (int k = 0; k < sweep.points_size(); ++k) {
    const v1::SweepPointResults& point = sweep.points(k);
    if (point.failure().empty()) continue;
    if (survival && point.variants_size() > 0 &&
        orchestrator::report::died_as_measured(point.failure(), survival->variant())) {
      continue;
    }
    failures += fmt::format("\n  point {} ({}): {}", k + 1, orchestrator::point_label(point.settings()),
                            point.failure());
  }
  failures += interrupted;
  if (survival) {
    *sweep.mutable_survival() = *survival;
    std::cout << orchestrator::report::survival_text(*survival);
  }
  orchestrator::report::SweepGates gates{first.name(), failures, static_cast<size_t>(sweep.points_size()),
                                         grid.points.size(), survival.has_value(),
                                         survival && survival->within_one_step(), survival ? survival->verdict() : ""};
  suites.push_back(orchestrator::report::sweep_suite(gates, gate));
  junit_written = write_sweep_junit(gate.junit, suites) && junit_written;
  auto files = orchestrator::report::write_sweep_files(out, first.outputs(), sweep);
  if (!files.ok()) fail("run", kExitFailed, files.status().message());
  std::cout << fmt::format("sweep: {} of {} points over {}\n  results: {}\n", sweep.points_size(), grid.points.size(),
                           fmt::join(sweep.fields(), ", "), files->json.string());
  if (!files->html.empty()) std::cout << "  report:  " << files->html.string() << "\n";
  for (const auto& png : files->pngs) std::cout << "  curve:   " << png.string() << "\n";
  if (!files->png_note.empty()) std::cout << "  " << files->png_note << "\n";
  if (!failures.empty()) fail("run", kExitFailed, "the sweep did not run cleanly:" + failures);
  if (!hold) fail("run", kExitFailed, "not every expectation holds at every point (see above)");
  if (!junit_written) fail("run", kExitFailed, "the JUnit file could not be written (see above)");
  if (survival && !survival->within_one_step()) {
    fail("run", kExitFailed, "the survival limit found is not within one step of the arithmetic: " + survival->verdict());
  }
}

void run(const RunOptions& opt) {
  const orchestrator::report::GateRun gate{opt.scenario, opt.junit, std::chrono::system_clock::now()};
  auto grid = orchestrator::load_scenario_grid(opt.scenario);
  if (!grid.ok()) {
    if (Status s = orchestrator::report::write_junit_for_bad_scenario(gate, grid.status().message()); !s.ok()) {
      std::cerr << "collide run: " << s.message() << "\n";
    }
    fail("run", kExitUsage, grid.status().message());
  }
  const v1::Scenario& scenario = grid->points.front().scenario;
  const std::filesystem::path out = opt.output.empty() ? scenario.outputs().directory() : opt.output;
  // Checked before anything runs: a place results cannot go is refused like a bad option.
  if (std::error_code made; !std::filesystem::create_directories(out, made) && made) {
    const std::string why = fmt::format("cannot create the results directory {}: {}", out.string(), made.message());
    if (Status s = orchestrator::report::write_junit_for_bad_scenario(gate, why); !s.ok()) {
      std::cerr << "collide run: " << s.message() << "\n";
    }
    fail("run", kExitUsage, why);
  }
  sweep_at_start("run", injectors::default_state_dir());
  orchestrator::LocalRunOptions local;
  local.collide_binary = self_path();
  local.run_timeout_s = opt.timeout_s;
  local.progress = [](const std::string& line) { std::cerr << "collide run: " << line << "\n"; };
  local.certs_dir = opt.certs;
  local.lease = std::chrono::milliseconds(static_cast<int64_t>(opt.lease_s * 1000));
  local.interrupted = &g_interrupted;
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  // Live counters for long runs; the endpoint lives until the report is written.
  orchestrator::metrics::Registry registry;
  std::unique_ptr<orchestrator::metrics::HttpEndpoint> metrics;
  if (!opt.metrics.empty()) {
    auto endpoint = orchestrator::metrics::HttpEndpoint::start(opt.metrics, registry);
    if (!endpoint.ok()) fail("run", kExitUsage, endpoint.status().message());
    metrics = std::move(endpoint).value();
    std::cerr << "collide run: metrics at " << metrics->url() << "\n";
    local.metrics = &registry;
  }
  if (grid->swept()) {
    run_sweep(*grid, out, local, gate);
    return;
  }
  PointOutcome point = run_point(scenario, {}, out, local, gate);
  if (scenario.runs().duration_ns() != 0) {
    // What a soak held at its most (it should not grow with the soak's length).
    rusage self{};
    if (getrusage(RUSAGE_SELF, &self) == 0) {
      std::cerr << fmt::format("collide run: peak memory {:.1f} MiB\n", static_cast<double>(self.ru_maxrss) / 1024);
    }
  }
  if (!point.ran) fail("run", kExitFailed, point.failure);
  // The partial results are in the report; the run as a whole failed.
  if (!point.failure.empty()) fail("run", kExitFailed, point.failure);
  if (!point.hold) fail("run", kExitFailed, "not every expectation holds (see above)");
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
  cmd->add_option("--certs", opt->certs,
                  "for remote agents (testbed.agents): directory with ca.pem, orchestrator.pem/.key");
  cmd->add_option("--lease", opt->lease_s,
                  "seconds an agent keeps a run going without word from here")->capture_default_str();
  cmd->add_option("--metrics", opt->metrics,
                  "serve live metrics for Prometheus at HOST:PORT/metrics (e.g. 127.0.0.1:9464; port 0 takes a "
                  "free port and the URL printed names it)");
  cmd->add_option("--junit", opt->junit,
                  "write the scenario's expectations (expect:) as JUnit XML to FILE, also when the run fails; for a sweep, "
                  "a suite per point and one for the sweep")
      ->type_name("FILE");
  cmd->callback([opt] { run(*opt); });
}

}  // namespace collide::cli
