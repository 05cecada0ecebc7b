#include "orchestrator/report/topology_svg.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "orchestrator/report/html_escape.h"

namespace collide::orchestrator::report {
namespace {

constexpr double kMargin = 30;
constexpr double kMinSpacing = 64;  // between two nodes of a row; past it labels would overlap
constexpr double kMinWidth = 640;
constexpr double kTop = 50, kRowGap = 120, kBottom = 40;
constexpr double kNodeW = 56, kNodeH = 20;

struct Node {
  std::string name;
  double x = 0;
  double y = 0;
};

// The nodes of one row, spread evenly over the drawing's width, in the order given.
void place_row(std::vector<Node>& row, double width, double y) {
  const double step = (width - 2 * kMargin) / static_cast<double>(std::max<size_t>(row.size(), 1));
  for (size_t i = 0; i < row.size(); ++i) {
    row[i].x = kMargin + step * (static_cast<double>(i) + 0.5);
    row[i].y = y;
  }
}

std::string megabytes(uint64_t bytes) { return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6); }

}  // namespace

std::string topology_svg(const std::vector<FabricLink>& links, const std::string& id) {
  if (links.empty()) return "";
  // Rows from the top: super-spines (3-tier), spines and leaves by index, each host NIC under its
  // leaf (so its line is short).
  std::map<uint32_t, std::string> supers, spines, leaves;
  std::map<std::pair<uint32_t, std::string>, bool> nics;  // (leaf, NIC) in order
  for (const FabricLink& l : links) {
    if (l.host_link) {
      leaves[l.leaf] = l.upper;
      nics[{l.leaf, l.lower}] = true;
    } else if (l.spine_link) {
      spines[l.spine] = l.lower;
      supers[l.super_spine] = l.upper;
    } else {
      leaves[l.leaf] = l.lower;
      spines[l.spine] = l.upper;
    }
  }
  std::vector<std::vector<Node>> rows;
  for (const auto* tier : {&supers, &spines, &leaves}) {
    if (tier->empty()) continue;
    rows.emplace_back();
    for (const auto& [index, name] : *tier) rows.back().push_back({name});
  }
  rows.emplace_back();
  for (const auto& [key, unused] : nics) rows.back().push_back({key.second});
  size_t widest = 0;
  for (const auto& row : rows) widest = std::max(widest, row.size());
  const double width = std::max(kMinWidth, 2 * kMargin + kMinSpacing * static_cast<double>(widest));
  const double height = kTop + kRowGap * static_cast<double>(rows.size() - 1) + kBottom;
  std::map<std::string, const Node*> at;
  for (size_t r = 0; r < rows.size(); ++r) {
    place_row(rows[r], width, kTop + kRowGap * static_cast<double>(r));
    for (const Node& n : rows[r]) at[n.name] = &n;
  }

  uint64_t busiest = 0;
  for (const FabricLink& l : links) busiest = std::max(busiest, l.lower_end.tx_bytes + l.upper_end.tx_bytes);
  std::string svg = fmt::format(
      "<svg id=\"{0}\" class=\"topology\" viewBox=\"0 0 {1} {2}\" width=\"{1}\" height=\"{2}\" "
      "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"10\">"
      "<rect width=\"{1}\" height=\"{2}\" fill=\"#ffffff\"/>",
      html_escape(id), width, height);
  for (const FabricLink& l : links) {
    const Node* a = at[l.lower];
    const Node* b = at[l.upper];
    if (a == nullptr || b == nullptr) continue;
    const uint64_t bytes = l.lower_end.tx_bytes + l.upper_end.tx_bytes;
    const double share = busiest > 0 ? static_cast<double>(bytes) / static_cast<double>(busiest) : 0.0;
    svg += fmt::format(
        "<line class=\"link\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#b2182b\" "
        "stroke-opacity=\"{:.2f}\" stroke-width=\"{:.1f}\"{}><title>{}: {} up, {} down</title></line>",
        a->x, a->y - kNodeH / 2, b->x, b->y + kNodeH / 2, bytes > 0 ? 0.15 + 0.85 * share : 0.4,
        1 + 5 * share, bytes > 0 ? "" : " stroke-dasharray=\"3 3\"", html_escape(l.name),
        megabytes(l.lower_end.tx_bytes), megabytes(l.upper_end.tx_bytes));
  }
  for (const auto& row : rows) {
    for (const Node& n : row) {
      svg += fmt::format(
          "<g class=\"node\"><title>{0}</title><rect x=\"{1:.1f}\" y=\"{2:.1f}\" width=\"{3}\" height=\"{4}\" "
          "rx=\"3\" fill=\"#f0f0f0\" stroke=\"#555\"/><text x=\"{5:.1f}\" y=\"{6:.1f}\" "
          "text-anchor=\"middle\">{0}</text></g>",
          html_escape(n.name), n.x - kNodeW / 2, n.y - kNodeH / 2, kNodeW, kNodeH, n.x, n.y + 3.5);
    }
  }
  return svg + "</svg>";
}

}  // namespace collide::orchestrator::report
