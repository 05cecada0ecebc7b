#include "orchestrator/report/job_results.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "orchestrator/report/compare.h"
#include "orchestrator/report/report.h"
#include "orchestrator/report/statistics.h"

namespace collide::orchestrator::report {

uint64_t job_completion_ns(const RunResult& run, const JobRanks& job) {
  const std::set<uint32_t> ranks(job.ranks.begin(), job.ranks.end());
  uint64_t start = UINT64_MAX, end = 0;
  for (const OpTiming& op : run.ops) {
    if (!ranks.count(op.rank)) continue;
    start = std::min(start, op.start_ns);
    end = std::max(end, op.end_ns);
  }
  return end > start ? end - start : 0;
}

std::vector<v1::JobResults> job_results(const std::vector<JobRanks>& jobs, const std::vector<const RunResult*>& runs,
                                        const std::vector<double>& baseline_jct_mean) {
  std::vector<v1::JobResults> out;
  for (size_t k = 0; k < jobs.size(); ++k) {
    std::vector<double> jct;
    for (const RunResult* run : runs) {
      if (run->failed) continue;
      if (const uint64_t ns = job_completion_ns(*run, jobs[k]); ns > 0) jct.push_back(static_cast<double>(ns) / 1e9);
    }
    if (jct.empty()) continue;  // e.g. another job's alone variant
    v1::JobResults r;
    r.set_name(jobs[k].name);
    for (uint32_t h : jobs[k].hosts) r.add_hosts(h);
    for (double j : jct) r.add_jct_seconds(j);
    const MeanInterval m = positive_mean_with_interval(jct);
    r.set_jct_mean_seconds(m.mean);
    r.set_jct_geomean_seconds(m.geomean);
    r.add_jct_ci95_seconds(m.low);
    r.add_jct_ci95_seconds(m.high);
    const double base = k < baseline_jct_mean.size() ? baseline_jct_mean[k] : 0;
    if (base > 0) {
      std::vector<double> ratios;
      for (double j : jct) ratios.push_back(j / base);
      const MeanInterval s = positive_mean_with_interval(ratios);
      r.set_slowdown_mean(s.mean);
      r.add_slowdown_ci95(s.low);
      r.add_slowdown_ci95(s.high);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<v1::JobInterference> job_interference(const std::vector<JobRanks>& jobs,
                                                  const std::vector<v1::JobResults>& together,
                                                  const std::vector<const v1::JobResults*>& alone) {
  std::vector<v1::JobInterference> out;
  for (size_t k = 0; k < jobs.size() && k < alone.size(); ++k) {
    if (jobs[k].alone_variant.empty()) continue;
    v1::JobInterference i;
    i.set_job(jobs[k].name);
    const auto with_others = std::find_if(together.begin(), together.end(),
                                          [&](const v1::JobResults& r) { return r.name() == jobs[k].name; });
    if (alone[k] == nullptr || with_others == together.end()) {
      i.set_verdict("too few runs");
      out.push_back(std::move(i));
      continue;
    }
    const std::vector<double> a(alone[k]->jct_seconds().begin(), alone[k]->jct_seconds().end());
    const std::vector<double> b(with_others->jct_seconds().begin(), with_others->jct_seconds().end());
    // The same statistics as `collide compare`: B (together) over A (alone), by repetition.
    const RatioInterval r = ratio_interval(a, b, 0.95);
    i.set_alone_jct_seconds(r.a);
    i.set_together_jct_seconds(r.b);
    i.set_ratio(r.ratio);
    if (r.verdict != CompareVerdict::kTooFewRuns) {
      i.add_ratio_ci95(r.low);
      i.add_ratio_ci95(r.high);
    }
    i.set_verdict(r.verdict == CompareVerdict::kWorse    ? "slower together"
                  : r.verdict == CompareVerdict::kBetter ? "faster together"
                  : r.verdict == CompareVerdict::kNoDifference ? "no detectable difference"
                                                               : "too few runs");
    out.push_back(std::move(i));
  }
  return out;
}

namespace {

// In a variant with faults: which jobs they spare, and which of those slowed all the same.
void mark_victims(const std::string& variant, const std::vector<JobRanks>& jobs, std::vector<v1::JobResults>& results) {
  for (v1::JobResults& r : results) {
    const auto job = std::find_if(jobs.begin(), jobs.end(), [&r](const JobRanks& j) { return j.name == r.name(); });
    if (job == jobs.end()) continue;
    const bool spared = std::find(job->faulted_in.begin(), job->faulted_in.end(), variant) == job->faulted_in.end();
    r.set_spared(spared);
    r.set_victim(spared && r.slowdown_ci95_size() == 2 && r.slowdown_ci95(0) >= kVictimSlowdown);
  }
}

// The victims of each variant's faults, or that its spared jobs held their pace.
std::string victims_text(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    std::string rows;
    bool any_spared = false;
    for (const v1::JobResults& j : v.jobs) {
      any_spared = any_spared || j.spared();
      if (j.victim()) {
        rows += fmt::format("  {:<26} {:<16} slowdown {:.3f} ({:.3f}..{:.3f})\n", v.name, j.name(), j.slowdown_mean(),
                            j.slowdown_ci95(0), j.slowdown_ci95(1));
      }
    }
    if (!any_spared) continue;
    if (rows.empty()) rows = fmt::format("  {:<26} none: the jobs its faults spare kept within {:.0f}% of the baseline\n", v.name, (kVictimSlowdown - 1) * 100);
    out += rows;
  }
  if (out.empty()) return "";
  return fmt::format("\nVictims: jobs that no fault of their variant acts on, slowed {:.1f}x or more all the same (their frames "
                     "waited behind others', e.g. at ports held by pauses)\n",
                     kVictimSlowdown) +
         out;
}

}  // namespace

void add_job_results(Report& report, const std::vector<JobRanks>& jobs, const std::vector<RunResult>& runs) {
  const auto runs_of = [&runs](const std::string& variant) {
    std::vector<const RunResult*> of;
    for (const RunResult& r : runs) {
      if (r.variant == variant) of.push_back(&r);
    }
    return of;
  };
  std::vector<double> baseline_mean(jobs.size(), 0);
  for (const v1::JobResults& j : job_results(jobs, runs_of("baseline"), {})) {
    for (size_t k = 0; k < jobs.size(); ++k) {
      if (jobs[k].name == j.name()) baseline_mean[k] = j.jct_mean_seconds();
    }
  }
  for (VariantSummary& v : report.variants) {
    // A job alone is not slower or faster than its baseline because of a fault: no slowdown there.
    const bool alone = std::any_of(jobs.begin(), jobs.end(), [&v](const JobRanks& j) { return j.alone_variant == v.name; });
    v.jobs = job_results(jobs, runs_of(v.name), v.name == "baseline" || alone ? std::vector<double>{} : baseline_mean);
    if (!v.faults.empty()) mark_victims(v.name, jobs, v.jobs);
  }
  const VariantSummary* together = nullptr;
  for (const VariantSummary& v : report.variants) {
    if (v.name == "baseline") together = &v;
  }
  if (together == nullptr) return;
  std::vector<const v1::JobResults*> alone(jobs.size(), nullptr);
  for (size_t k = 0; k < jobs.size(); ++k) {
    for (const VariantSummary& v : report.variants) {
      if (jobs[k].alone_variant.empty() || v.name != jobs[k].alone_variant) continue;
      for (const v1::JobResults& j : v.jobs) {
        if (j.name() == jobs[k].name) alone[k] = &j;
      }
    }
  }
  report.interference = job_interference(jobs, together->jobs, alone);
}

std::string jobs_text(const Report& report) {
  std::string out;
  for (const VariantSummary& v : report.variants) {
    for (const v1::JobResults& j : v.jobs) {
      if (out.empty()) {
        out = fmt::format("\nJobs: each job's own completion time\n  {:<26} {:<16} {:>10} {:>19} {:>22}\n", "variant",
                          "job", "JCT (s)", "JCT 95% CI (s)", "slowdown (95% CI)");
      }
      const std::string slowdown = j.slowdown_ci95_size() == 2
                                       ? fmt::format("{:.3f} ({:.3f}..{:.3f})", j.slowdown_mean(), j.slowdown_ci95(0),
                                                     j.slowdown_ci95(1))
                                       : "-";
      out += fmt::format("  {:<26} {:<16} {:>10.4f} {:>19} {:>22}\n", v.name, j.name(), j.jct_mean_seconds(),
                         fmt::format("{:.4f}..{:.4f}", j.jct_ci95_seconds(0), j.jct_ci95_seconds(1)), slowdown);
    }
  }
  out += victims_text(report);
  if (!report.interference.empty()) {
    out += "\nInterference: each job's JCT with the others (baseline) over its JCT alone (geometric means, 95% CI)\n";
    for (const v1::JobInterference& i : report.interference) {
      const std::string interval =
          i.ratio_ci95_size() == 2 ? fmt::format("{:.3f}..{:.3f}", i.ratio_ci95(0), i.ratio_ci95(1)) : "-";
      out += fmt::format("  {:<16} alone {:.4f} s, together {:.4f} s: {:.3f}x ({}) {}\n", i.job(), i.alone_jct_seconds(),
                         i.together_jct_seconds(), i.ratio(), interval, i.verdict());
    }
  }
  return out;
}

}  // namespace collide::orchestrator::report
