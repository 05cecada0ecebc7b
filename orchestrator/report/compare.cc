#include "orchestrator/report/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "orchestrator/report/statistics.h"

namespace collide::orchestrator::report {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBaseline = "baseline";  // the variant `collide run` runs without faults

struct LogSample {
  double mean = 0;
  double squares = 0;  // sum of squared deviations from the mean
  size_t n = 0;
};

LogSample log_sample(const std::vector<double>& values) {
  LogSample s;
  s.n = values.size();
  if (s.n == 0) return s;
  for (double v : values) s.mean += std::log(v);
  s.mean /= static_cast<double>(s.n);
  for (double v : values) s.squares += (std::log(v) - s.mean) * (std::log(v) - s.mean);
  return s;
}

using Key = std::tuple<std::string, uint64_t, std::string, std::string>;

Key key_of(const v1::CollectiveTimeSamples& s) { return {s.kind(), s.size_bytes(), s.type(), s.redop()}; }

RowKey row_key(const Key& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)}; }

// One side's rows of one variant: per row, each completed repetition's median and p99.
struct SideRow {
  std::vector<double> p50, p99;
  uint64_t count = 0;
  bool sampled = false;
};

struct Side {
  std::vector<double> jct;
  std::map<uint32_t, double> jct_by_repetition;  // completed repetitions only
  std::map<Key, SideRow> rows;
  bool any_times = false;
  uint32_t completed = 0;
};

Side side_of(const v1::VariantResults& v) {
  Side side;
  for (const v1::RepetitionResult& rep : v.repetitions()) {
    if (rep.failed()) continue;
    ++side.completed;
    if (rep.jct_seconds() > 0) {
      side.jct.push_back(rep.jct_seconds());
      side.jct_by_repetition[rep.repetition()] = rep.jct_seconds();
    }
    // A repetition may hold a kind and size twice (communicators of different sizes with one
    // nccl-tests S): its times are one row.
    std::map<Key, std::vector<double>> times;
    for (const v1::CollectiveTimeSamples& s : rep.collective_times()) {
      side.any_times = true;
      SideRow& row = side.rows[key_of(s)];
      row.count += s.count();
      row.sampled = row.sampled || s.sampled();
      auto& t = times[key_of(s)];
      t.insert(t.end(), s.times_us().begin(), s.times_us().end());
    }
    for (auto& [key, t] : times) {
      // Completion times are positive; a zero (a clock that did not move) would end the log scale.
      for (double& x : t) x = std::max(x, 1e-3);
      if (t.empty()) continue;
      side.rows[key].p50.push_back(quantile(t, 0.5));
      side.rows[key].p99.push_back(quantile(t, 0.99));
    }
  }
  // Without a variant's repetitions (a report.json cut down by hand) its JCTs still are there.
  if (v.repetitions_size() == 0) {
    side.jct.assign(v.jct_seconds().begin(), v.jct_seconds().end());
    side.completed = static_cast<uint32_t>(side.jct.size());
  }
  return side;
}

// Each repetition's JCT over its baseline's in the same repetition. A run's repetitions go
// baseline first, then every variant, so the pair ran back to back on the same machine.
std::vector<double> paired_slowdowns(const Side& variant, const Side& baseline) {
  std::vector<double> out;
  for (const auto& [rep, jct] : variant.jct_by_repetition) {
    auto it = baseline.jct_by_repetition.find(rep);
    if (it != baseline.jct_by_repetition.end()) out.push_back(jct / it->second);
  }
  return out;
}

const v1::VariantResults* find_variant(const v1::Results& r, const std::string& name) {
  for (const v1::VariantResults& v : r.variants()) {
    if (v.name() == name) return &v;
  }
  return nullptr;
}

}  // namespace

Result<v1::Results> read_results(const std::string& path) {
  fs::path file = path;
  std::error_code ec;
  if (fs::is_directory(file, ec)) file /= "report.json";
  std::ifstream in(file);
  if (!in) {
    return not_found(fmt::format("{}: cannot read it ({})", file.string(),
                                 fs::exists(file, ec) ? "permission denied" : "no such file"));
  }
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::util::JsonParseOptions options;
  // Fields a newer collide wrote are not what compare reads; they do not make the file bad.
  options.ignore_unknown_fields = true;
  v1::Results results;
  const auto parsed = google::protobuf::util::JsonStringToMessage(text.str(), &results, options);
  if (!parsed.ok()) {
    return invalid_argument(fmt::format("{}: not a collide report.json: {}", file.string(),
                                        std::string(parsed.message())));
  }
  if (results.variants_size() == 0) {
    return invalid_argument(fmt::format("{}: not a collide report.json: no variants", file.string()));
  }
  for (const v1::VariantResults& v : results.variants()) {
    if (v.name().empty()) {
      return invalid_argument(fmt::format("{}: a variant without a name", file.string()));
    }
    for (const v1::RepetitionResult& r : v.repetitions()) {
      if (!(r.jct_seconds() >= 0) || !std::isfinite(r.jct_seconds())) {
        return invalid_argument(fmt::format("{}: variant {} repetition {}: jct_seconds {} is not a "
                                            "time",
                                            file.string(), v.name(), r.repetition(), r.jct_seconds()));
      }
      for (const v1::CollectiveTimeSamples& s : r.collective_times()) {
        for (double t : s.times_us()) {
          if (!(t >= 0) || !std::isfinite(t)) {
            return invalid_argument(fmt::format(
                "{}: variant {} repetition {}: {} {} B: times_us {} is not a time", file.string(),
                v.name(), r.repetition(), s.kind(), s.size_bytes(), t));
          }
        }
      }
    }
  }
  return results;
}

const char* verdict_name(CompareVerdict v) {
  switch (v) {
    case CompareVerdict::kBetter: return "better";
    case CompareVerdict::kWorse: return "worse";
    case CompareVerdict::kNoDifference: return "no detectable difference";
    case CompareVerdict::kTooFewRuns: return "too few repetitions";
  }
  return "?";
}

// Why the repetition, not the collective, is the unit. The collectives of one repetition are not
// independent draws: a loaded machine, a noisy neighbour or a different placement of the replay's
// threads slows or speeds a whole run. Pooling every collective of a run as if independent gives
// an interval as narrow as thousands of samples allow, and two runs of one unchanged baseline then
// "differ" by whatever the machine did between them. So each repetition contributes one value per
// statistic (its median, its p99: the within-run spread is in how much those values move), and the
// interval is Student's t over repetitions:
// - on the log scale, so a ratio's interval is a ratio's (never below 0, as long above 1 as below)
//   and skewed times are made roughly symmetric;
// - Welch's, with its fractional degrees of freedom, when both sides have 2 or more repetitions
//   (a fault may make one side's runs noisier than the other's); a pooled variance when one side
//   has a single repetition but there are 3 in all; no interval below that: run-to-run variation
//   cannot be estimated from one run per side, and a verdict without it would be the very error
//   described above.
// What no interval over repetitions can carry is a change of the machine between the two runs
// that held for all of one run (another job started in between): the runs themselves are then the
// difference, and only repeating them shows it.
// A bootstrap over repetitions (or over repetitions, then collectives within them) was the other
// candidate: with the 2 to 5 repetitions a scenario usually runs it has only a handful of distinct
// resamples and its percentile interval comes out too narrow by about sqrt((n - 1) / n) and by using
// normal rather than t quantiles; with 2 repetitions per side that is a factor of 3 or more.
RatioInterval ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                             double level) {
  RatioInterval r;
  const LogSample la = log_sample(a), lb = log_sample(b);
  if (la.n == 0 || lb.n == 0) return r;
  r.a = std::exp(la.mean);
  r.b = std::exp(lb.mean);
  const double d = lb.mean - la.mean;
  r.ratio = std::exp(d);
  const double na = static_cast<double>(la.n), nb = static_cast<double>(lb.n);
  double se2 = 0;
  if (la.n >= 2 && lb.n >= 2) {
    const double va = la.squares / (na - 1) / na, vb = lb.squares / (nb - 1) / nb;
    se2 = va + vb;
    r.dof = se2 > 0 ? se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1)) : na + nb - 2;
  } else if (la.n + lb.n >= 3) {
    r.dof = na + nb - 2;
    se2 = (la.squares + lb.squares) / r.dof * (1 / na + 1 / nb);
  } else {
    return r;
  }
  const double half = student_t_quantile(0.5 + level / 2, r.dof) * std::sqrt(se2);
  r.low = std::exp(d - half);
  r.high = std::exp(d + half);
  r.verdict = r.low > 1 ? CompareVerdict::kWorse : r.high < 1 ? CompareVerdict::kBetter : CompareVerdict::kNoDifference;
  return r;
}

Comparison compare_results(const v1::Results& a, const v1::Results& b, double level,
                           const std::string& a_label, const std::string& b_label) {
  Comparison out;
  out.a_label = a_label;
  out.b_label = b_label;
  out.level = level;
  std::vector<std::string> names;
  std::map<std::string, const v1::VariantResults*> in_a, in_b;
  for (const v1::VariantResults& v : a.variants()) {
    if (in_a.emplace(v.name(), &v).second) names.push_back(v.name());
  }
  for (const v1::VariantResults& v : b.variants()) {
    if (in_b.emplace(v.name(), &v).second && !in_a.count(v.name())) names.push_back(v.name());
  }
  for (const std::string& name : names) {
    VariantComparison vc;
    vc.name = name;
    vc.in_a = in_a.count(name) > 0;
    vc.in_b = in_b.count(name) > 0;
    if (!vc.in_a || !vc.in_b) {
      out.variants.push_back(std::move(vc));
      continue;
    }
    const Side sa = side_of(*in_a[name]), sb = side_of(*in_b[name]);
    vc.completed_a = sa.completed;
    vc.completed_b = sb.completed;
    vc.jct = ratio_interval(sa.jct, sb.jct, level);
    const v1::VariantResults* base_a = find_variant(a, kBaseline);
    const v1::VariantResults* base_b = find_variant(b, kBaseline);
    if (name != kBaseline && base_a && base_b) {
      vc.has_slowdown = true;
      vc.slowdown = ratio_interval(paired_slowdowns(sa, side_of(*base_a)),
                                   paired_slowdowns(sb, side_of(*base_b)), level);
    }
    vc.without_collective_times = (sa.completed > 0 && !sa.any_times) || (sb.completed > 0 && !sb.any_times);
    for (const auto& [key, ra] : sa.rows) {
      auto it = sb.rows.find(key);
      if (it == sb.rows.end()) {
        vc.rows_only_in_a.push_back(row_key(key));
        continue;
      }
      const SideRow& rb = it->second;
      CompareRow row;
      row.kind = std::get<0>(key);
      row.size_bytes = std::get<1>(key);
      row.type = std::get<2>(key);
      row.redop = std::get<3>(key);
      row.repetitions_a = ra.p50.size();
      row.repetitions_b = rb.p50.size();
      row.count_a = ra.count;
      row.count_b = rb.count;
      row.sampled = ra.sampled || rb.sampled;
      row.p50 = ratio_interval(ra.p50, rb.p50, level);
      row.p99 = ratio_interval(ra.p99, rb.p99, level);
      vc.rows.push_back(std::move(row));
    }
    for (const auto& [key, rb] : sb.rows) {
      if (!sa.rows.count(key)) vc.rows_only_in_b.push_back(row_key(key));
    }
    out.variants.push_back(std::move(vc));
  }
  return out;
}

}  // namespace collide::orchestrator::report
