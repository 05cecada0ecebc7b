// The soak dashboard (configs/grafana/collide-soak.json) may chart only what collide exports: a
// renamed or misspelled metric would leave a panel empty without a word from Grafana.
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "orchestrator/metrics/registry.h"

namespace collide::orchestrator::metrics {
namespace {

using nlohmann::json;

// PromQL words that are neither functions (those are followed by '(') nor metric names.
const std::set<std::string> kPromqlWords = {"by",  "without", "on",     "ignoring", "group_left", "group_right",
                                            "bool", "and",    "or",     "unless",   "offset",     "inf",
                                            "nan"};

// The metric names a PromQL expression selects: identifiers left once strings, label matchers
// ({...}), ranges ([...]) and label lists of by/without/on/ignoring (...) are taken out, and that
// are not a function or an aggregation (followed by '(').
std::vector<std::string> metrics_named(std::string expr) {
  static const std::vector<std::regex> removed = {
      std::regex(R"("([^"\\]|\\.)*")"), std::regex(R"(\{[^}]*\})"), std::regex(R"(\[[^\]]*\])"),
      std::regex(R"(\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\))")};
  for (const std::regex& r : removed) expr = std::regex_replace(expr, r, " ");
  static const std::regex identifier(R"([a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?)");
  std::vector<std::string> names;
  for (std::sregex_iterator it(expr.begin(), expr.end(), identifier), end; it != end; ++it) {
    if ((*it)[1].matched) continue;  // a function or an aggregation
    const std::string word = (*it)[0].str();
    const auto at = static_cast<size_t>(it->position());
    const bool in_number = at > 0 && (std::isdigit(static_cast<unsigned char>(expr[at - 1])) || expr[at - 1] == '.');
    if (kPromqlWords.count(word) == 0 && !in_number) names.push_back(word);
  }
  return names;
}

struct Query {
  std::string where;  // panel title and refId, or the template variable
  std::string expr;
};

void collect_panel_queries(const json& panels, std::vector<Query>& out) {
  for (const json& panel : panels) {
    const std::string title = panel.value("title", "(untitled)");
    if (panel.contains("panels")) collect_panel_queries(panel["panels"], out);  // a collapsed row
    if (panel.value("type", "") == "row") continue;
    EXPECT_TRUE(panel.contains("targets") && !panel["targets"].empty()) << "panel '" << title << "' has no query";
    for (const json& target : panel.value("targets", json::array())) {
      out.push_back({"panel '" + title + "' " + target.value("refId", "?"), target.value("expr", "")});
    }
  }
}

// Every query of the dashboard: its panels' targets and its query variables.
std::vector<Query> queries_of(const json& dashboard) {
  std::vector<Query> out;
  collect_panel_queries(dashboard.value("panels", json::array()), out);
  for (const json& variable : dashboard["templating"].value("list", json::array())) {
    if (variable.value("type", "") != "query") continue;
    const json& q = variable["query"];
    // Grafana's label_values(SELECTOR, LABEL) queries SELECTOR; LABEL is no metric.
    static const std::regex label_values(R"(^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$)");
    const std::string text = q.is_object() ? q.value("query", "") : q.get<std::string>();
    out.push_back({"variable '" + variable.value("name", "") + "'", std::regex_replace(text, label_values, "$1")});
  }
  return out;
}

// What is wrong with the dashboard's queries: one line per query naming no metric or one collide
// does not export.
std::vector<std::string> problems_of(const json& dashboard) {
  std::set<std::string> exported;
  for (const ExportedSeries& s : Registry::exported_series()) exported.insert(s.name);
  std::vector<std::string> problems;
  for (const Query& q : queries_of(dashboard)) {
    const std::vector<std::string> names = metrics_named(q.expr);
    if (names.empty()) problems.push_back(q.where + ": names no metric: " + q.expr);
    for (const std::string& name : names) {
      if (exported.count(name) == 0) problems.push_back(q.where + ": collide exports no " + name);
    }
  }
  return problems;
}

json load(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return json::parse(in);  // throws, failing the test, with the offset of a syntax error
}

TEST(GrafanaDashboardTest, EveryPanelQueriesOnlyMetricsCollideExports) {
  const json dashboard = load(COLLIDE_GRAFANA_DIR "/collide-soak.json");
  EXPECT_EQ(dashboard.value("uid", ""), "collide-soak");
  const std::vector<Query> queries = queries_of(dashboard);
  EXPECT_GE(queries.size(), 10u);
  for (const std::string& problem : problems_of(dashboard)) {
    ADD_FAILURE() << problem;
  }
  // Each family collide exports is on some panel, so a new one is not forgotten here.
  std::set<std::string> charted;
  for (const Query& q : queries) {
    for (const std::string& name : metrics_named(q.expr)) charted.insert(name);
  }
  for (const ExportedSeries& s : Registry::exported_series()) {
    if (s.type == "histogram" && !s.name.ends_with("_bucket")) continue;  // its _sum and _count
    if (s.type == "summary" && (s.name.ends_with("_sum") || s.name.ends_with("_count"))) continue;
    EXPECT_EQ(charted.count(s.name), 1u) << s.name << " is on no panel";
  }
}

TEST(GrafanaDashboardTest, FindsMetricNamesInPromql) {
  EXPECT_EQ(metrics_named(R"(histogram_quantile(0.99, sum by (le, variant) (rate(collide_collective_seconds_bucket{variant=~"$variant"}[$__rate_interval]))))"),
            std::vector<std::string>{"collide_collective_seconds_bucket"});
  EXPECT_EQ(metrics_named("sum without (host) (a_total) / on (variant) group_left b + 1e3 * c offset 5m"),
            (std::vector<std::string>{"a_total", "b", "c"}));
}

// The check catches a misspelled metric, a foreign one and a query with none.
TEST(GrafanaDashboardTest, ReportsQueriesOfMetricsCollideDoesNotExport) {
  const json dashboard = json::parse(R"json({
    "panels": [
      {"title": "typo", "type": "timeseries", "targets": [{"refId": "A", "expr": "rate(collide_packet_sent_total[5m])"}]},
      {"title": "row", "type": "row", "panels": [
        {"title": "foreign", "type": "timeseries", "targets": [{"refId": "B", "expr": "node_load1"}]}]},
      {"title": "constant", "type": "stat", "targets": [{"refId": "C", "expr": "vector(1)"}]},
      {"title": "fine", "type": "stat", "targets": [{"refId": "D", "expr": "sum(collide_runs_total)"}]}
    ],
    "templating": {"list": [
      {"name": "v", "type": "query", "query": {"query": "label_values(collide_repetitions, variant)"}},
      {"name": "w", "type": "query", "query": "label_values(collide_repetition, variant)"}]}
  })json");
  EXPECT_EQ(problems_of(dashboard), (std::vector<std::string>{
                                        "panel 'typo' A: collide exports no collide_packet_sent_total",
                                        "panel 'foreign' B: collide exports no node_load1",
                                        "panel 'constant' C: names no metric: vector(1)",
                                        "variable 'v': collide exports no collide_repetitions",
                                    }));
}

}  // namespace
}  // namespace collide::orchestrator::metrics
