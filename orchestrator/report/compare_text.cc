#include <fmt/format.h>

#include "orchestrator/report/compare_output.h"

namespace collide::orchestrator::report {
namespace {

std::string dash_if_empty(const std::string& s) { return s.empty() ? "-" : s; }

std::string row_name(const std::string& kind, uint64_t bytes, const std::string& type,
                     const std::string& redop) {
  return fmt::format("{} {} B {} {}", kind, bytes, dash_if_empty(type), dash_if_empty(redop));
}

// One statistic of one row; `digits` after the point for A's and B's values.
std::string line(const std::string& what, const std::string& stat, const RatioInterval& r,
                 int digits, const std::string& unit) {
  // A side without a completed repetition has no value: a dash, not a zero.
  auto value = [&](double x) { return x > 0 ? fmt::format("{:.{}f}{}", x, digits, unit) : "-"; };
  return fmt::format("  {:<40} {:>4} {:>12} {:>12} {:>24}  {}\n", what, stat, value(r.a),
                     value(r.b), ratio_text(r), verdict_name(r.verdict));
}

nlohmann::json ratio_json(const RatioInterval& r) {
  nlohmann::json j = {{"a", r.a}, {"b", r.b}, {"ratio", r.ratio}, {"verdict", verdict_name(r.verdict)}};
  if (r.verdict != CompareVerdict::kTooFewRuns) {
    j["interval"] = {r.low, r.high};
    j["dof"] = r.dof;
  }
  return j;
}

nlohmann::json key_json(const RowKey& k) {
  return {{"kind", k.kind}, {"size_bytes", k.size_bytes}, {"type", k.type}, {"redop", k.redop}};
}

}  // namespace

std::string ratio_text(const RatioInterval& r) {
  if (!(r.ratio > 0)) return "-";
  if (r.verdict == CompareVerdict::kTooFewRuns) return fmt::format("{:.3f} (-)", r.ratio);
  return fmt::format("{:.3f} ({:.3f}..{:.3f})", r.ratio, r.low, r.high);
}

std::string comparison_text(const Comparison& c) {
  std::string out = fmt::format(
      "A: {}\nB: {}\nRatios are B / A (above 1: B took longer), with {:g}% intervals over "
      "repetitions; p50 and p99 are each repetition's, A and B their geometric means over "
      "repetitions.\n",
      c.a_label, c.b_label, c.level * 100);
  for (const VariantComparison& v : c.variants) {
    if (!v.in_a || !v.in_b) {
      out += fmt::format("\n{}: only in {}\n", v.name, v.in_a ? "A" : "B");
      continue;
    }
    out += fmt::format("\n{}: {} repetitions completed in A, {} in B\n", v.name, v.completed_a,
                       v.completed_b);
    out += fmt::format("  {:<40} {:>4} {:>12} {:>12} {:>24}  {}\n", "collective size type redop",
                       "", "A", "B", "B/A (interval)", "verdict");
    out += line("job completion time", "JCT", v.jct, 4, " s");
    if (v.has_slowdown) out += line("JCT / its repetition's baseline JCT", "", v.slowdown, 3, "x");
    for (const CompareRow& r : v.rows) {
      const std::string what = row_name(r.kind, r.size_bytes, r.type, r.redop);
      out += line(what, "p50", r.p50, 1, " us");
      out += line(r.sampled ? "  (times sampled)" : "", "p99", r.p99, 1, " us");
    }
    for (const RowKey& k : v.rows_only_in_a) {
      out += fmt::format("  {}: only in A\n", row_name(k.kind, k.size_bytes, k.type, k.redop));
    }
    for (const RowKey& k : v.rows_only_in_b) {
      out += fmt::format("  {}: only in B\n", row_name(k.kind, k.size_bytes, k.type, k.redop));
    }
    if (v.without_collective_times) {
      out += "  (a report.json without per-repetition collective times: rerun it with this collide "
             "to compare collectives)\n";
    }
  }
  return out;
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json j = {{"a", c.a_label}, {"b", c.b_label}, {"level", c.level},
                      {"ratio", "b / a"}, {"variants", nlohmann::json::array()}};
  for (const VariantComparison& v : c.variants) {
    nlohmann::json jv = {{"name", v.name}, {"in_a", v.in_a}, {"in_b", v.in_b}};
    if (v.in_a && v.in_b) {
      jv["completed_a"] = v.completed_a;
      jv["completed_b"] = v.completed_b;
      jv["jct_seconds"] = ratio_json(v.jct);
      if (v.has_slowdown) jv["slowdown_vs_baseline"] = ratio_json(v.slowdown);
      jv["collectives"] = nlohmann::json::array();
      for (const CompareRow& r : v.rows) {
        nlohmann::json jr = key_json({r.kind, r.size_bytes, r.type, r.redop});
        jr["repetitions_a"] = r.repetitions_a;
        jr["repetitions_b"] = r.repetitions_b;
        jr["count_a"] = r.count_a;
        jr["count_b"] = r.count_b;
        jr["sampled"] = r.sampled;
        jr["p50_us"] = ratio_json(r.p50);
        jr["p99_us"] = ratio_json(r.p99);
        jv["collectives"].push_back(std::move(jr));
      }
      jv["only_in_a"] = nlohmann::json::array();
      for (const RowKey& k : v.rows_only_in_a) jv["only_in_a"].push_back(key_json(k));
      jv["only_in_b"] = nlohmann::json::array();
      for (const RowKey& k : v.rows_only_in_b) jv["only_in_b"].push_back(key_json(k));
      jv["without_collective_times"] = v.without_collective_times;
    }
    j["variants"].push_back(std::move(jv));
  }
  return j;
}

}  // namespace collide::orchestrator::report
