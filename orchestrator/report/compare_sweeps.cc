#include "orchestrator/report/compare_sweeps.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "orchestrator/report/compare_output.h"
#include "orchestrator/report/html_escape.h"
#include "orchestrator/report/sweep_point_label.h"

namespace collide::orchestrator::report {
namespace {

namespace fs = std::filesystem;

fs::path sweep_file(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? fs::path(path) / "sweep.json" : fs::path(path);
}

Result<v1::SweepResults> read_sweep(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return not_found(fmt::format("{}: cannot read it", file.string()));
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // what a newer collide added is not what is compared
  v1::SweepResults sweep;
  if (const auto parsed = google::protobuf::util::JsonStringToMessage(text.str(), &sweep, options); !parsed.ok()) {
    return invalid_argument(fmt::format("{}: not a collide sweep.json: {}", file.string(), std::string(parsed.message())));
  }
  if (sweep.points_size() == 0) return invalid_argument(fmt::format("{}: not a collide sweep.json: no points", file.string()));
  return sweep;
}

// Points are the same when each swept field has the same value (what ran, not how it was written).
bool same_point(const v1::SweepPointResults& a, const v1::SweepPointResults& b) {
  if (a.settings_size() != b.settings_size()) return false;
  for (int i = 0; i < a.settings_size(); ++i) {
    if (a.settings(i).field() != b.settings(i).field() || a.settings(i).value() != b.settings(i).value()) return false;
  }
  return true;
}

std::string fields_of(const v1::SweepResults& s) {
  std::string out;
  for (const std::string& f : s.fields()) out += (out.empty() ? "" : ", ") + f;
  return out;
}

}  // namespace

bool is_sweep(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return fs::exists(fs::path(path) / "sweep.json", ec);
  return fs::path(path).filename() == "sweep.json";
}

Result<SweepComparison> compare_sweeps(const std::string& a, const std::string& b, double level) {
  const fs::path a_file = sweep_file(a), b_file = sweep_file(b);
  auto sweep_a = read_sweep(a_file);
  if (!sweep_a.ok()) return Status(sweep_a.status().code(), "A: " + sweep_a.status().message());
  auto sweep_b = read_sweep(b_file);
  if (!sweep_b.ok()) return Status(sweep_b.status().code(), "B: " + sweep_b.status().message());
  if (fields_of(*sweep_a) != fields_of(*sweep_b)) {
    return invalid_argument(fmt::format("A sweeps {} and B sweeps {}: only sweeps of the same fields compare",
                                        fields_of(*sweep_a), fields_of(*sweep_b)));
  }
  SweepComparison out;
  out.a_label = a;
  out.b_label = b;
  out.a_scenario = sweep_a->scenario();
  out.b_scenario = sweep_b->scenario();
  out.level = level;
  std::vector<bool> b_matched(sweep_b->points_size(), false);
  for (const v1::SweepPointResults& pa : sweep_a->points()) {
    const std::string label = point_label(pa.settings());
    int match = -1;
    for (int k = 0; k < sweep_b->points_size() && match < 0; ++k) {
      if (!b_matched[k] && same_point(pa, sweep_b->points(k))) match = k;
    }
    if (match < 0) {
      out.not_compared.emplace_back(label, "only in A");
      continue;
    }
    b_matched[match] = true;
    const v1::SweepPointResults& pb = sweep_b->points(match);
    const fs::path a_dir = a_file.parent_path() / pa.directory(), b_dir = b_file.parent_path() / pb.directory();
    auto ra = read_results(a_dir.string());
    auto rb = read_results(b_dir.string());
    if (!ra.ok() || !rb.ok()) {
      out.not_compared.emplace_back(label, !ra.ok() ? "A: " + ra.status().message() : "B: " + rb.status().message());
      continue;
    }
    PointComparison p{label, a_dir.string(), b_dir.string(), std::move(ra).value(), std::move(rb).value(), {}};
    p.comparison = compare_results(p.a, p.b, level, p.a_directory, p.b_directory);
    out.points.push_back(std::move(p));
  }
  for (int k = 0; k < sweep_b->points_size(); ++k) {
    if (!b_matched[k]) out.not_compared.emplace_back(point_label(sweep_b->points(k).settings()), "only in B");
  }
  if (out.points.empty()) {
    return invalid_argument(fmt::format("A ({}) and B ({}) have no point in common that both have results for",
                                        a_file.string(), b_file.string()));
  }
  return out;
}

std::string sweep_comparison_text(const SweepComparison& c) {
  std::string out = fmt::format("sweeps compared point by point: A {} ({}), B {} ({})\n", c.a_label, c.a_scenario,
                                c.b_label, c.b_scenario);
  for (const PointComparison& p : c.points) {
    out += fmt::format("\n== point {}\n", p.label);
    out += comparison_text(p.comparison);
  }
  for (const auto& [label, why] : c.not_compared) out += fmt::format("\npoint {}: not compared: {}\n", label, why);
  return out;
}

nlohmann::json sweep_comparison_json(const SweepComparison& c) {
  nlohmann::json j = {{"a", c.a_label}, {"b", c.b_label}, {"level", c.level}, {"ratio", "b / a"},
                      {"points", nlohmann::json::array()}, {"not_compared", nlohmann::json::array()}};
  for (const PointComparison& p : c.points) {
    j["points"].push_back({{"point", p.label}, {"comparison", comparison_json(p.comparison)}});
  }
  for (const auto& [label, why] : c.not_compared) j["not_compared"].push_back({{"point", label}, {"why", why}});
  return j;
}

std::string sweep_comparison_html(const SweepComparison& c) {
  const auto heading = [](const char* side, const std::string& label, const std::string& scenario) {
    return fmt::format("<div class=\"run\"><h3>{}: {}</h3><p>sweep {}</p></div>", side, html_escape(label),
                       html_escape(scenario));
  };
  std::string html = comparison_page_start(c.a_label, c.b_label, heading("A", c.a_label, c.a_scenario),
                                           heading("B", c.b_label, c.b_scenario), c.level);
  for (const PointComparison& p : c.points) {
    html += fmt::format("<h2 class=\"point\">point {}</h2>\n", html_escape(p.label));
    html += comparison_variants_html(p.comparison, "h3");
  }
  for (const auto& [label, why] : c.not_compared) {
    html += fmt::format("<h2 class=\"point\">point {}</h2>\n<p>Not compared: {}.</p>\n", html_escape(label),
                        html_escape(why));
  }
  return html + "</body></html>\n";
}

}  // namespace collide::orchestrator::report
