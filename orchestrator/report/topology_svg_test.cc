#include "orchestrator/report/topology_svg.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::report {
namespace {

FabricLink host_link(uint32_t host, uint32_t leaf, uint64_t up, uint64_t down) {
  FabricLink l;
  l.lower = "h" + std::to_string(host) + ".nic0";
  l.upper = "leaf" + std::to_string(leaf);
  l.name = l.lower + "-" + l.upper;
  l.host_link = true;
  l.leaf = leaf;
  l.lower_end.tx_bytes = up;
  l.upper_end.tx_bytes = down;
  return l;
}

FabricLink fabric_link(uint32_t leaf, uint32_t spine, uint64_t up, uint64_t down) {
  FabricLink l;
  l.lower = "leaf" + std::to_string(leaf);
  l.upper = "spine" + std::to_string(spine);
  l.name = l.lower + "-" + l.upper;
  l.leaf = leaf;
  l.spine = spine;
  l.lower_end.tx_bytes = up;
  l.upper_end.tx_bytes = down;
  return l;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The line of the link named `name`, from its start to its title.
std::string line_of(const std::string& svg, const std::string& name) {
  const size_t title = svg.find("<title>" + name + ":");
  if (title == std::string::npos) return "";
  const size_t start = svg.rfind("<line", title);
  return svg.substr(start, title - start);
}

TEST(TopologySvgTest, EachLinkIsAsDarkAndWideAsItsBytesAndAnIdleOneIsDashed) {
  // Leaf 0's two flows both took spine 0 (a collision); spine 1's link idled.
  const std::vector<FabricLink> links = {host_link(0, 0, 10'000'000, 10'000'000), host_link(2, 0, 10'000'000, 10'000'000),
                                         host_link(1, 1, 10'000'000, 10'000'000), fabric_link(0, 0, 20'000'000, 20'000'000),
                                         fabric_link(0, 1, 0, 0)};
  const std::string svg = topology_svg(links, "topology-one-qp");
  EXPECT_EQ(svg.rfind("<svg id=\"topology-one-qp\"", 0), 0u) << svg;
  EXPECT_EQ(count(svg, "<line class=\"link\""), 5u);
  EXPECT_EQ(count(svg, "<g class=\"node\">"), 2u + 2u + 3u);  // spines, leaves, NICs
  const std::string busiest = line_of(svg, "leaf0-spine0");
  EXPECT_NE(busiest.find("stroke-opacity=\"1.00\" stroke-width=\"6.0\""), std::string::npos) << busiest;
  const std::string half = line_of(svg, "h0.nic0-leaf0");
  EXPECT_NE(half.find("stroke-opacity=\"0.57\" stroke-width=\"3.5\""), std::string::npos) << half;
  const std::string idle = line_of(svg, "leaf0-spine1");
  EXPECT_NE(idle.find("stroke-dasharray"), std::string::npos) << idle;
  EXPECT_EQ(busiest.find("stroke-dasharray"), std::string::npos) << busiest;
  EXPECT_NE(svg.find("<title>leaf0-spine0: 20.0 MB up, 20.0 MB down</title>"), std::string::npos);
  // Host NICs sit under their leaf: h0 and h2 (leaf 0) left of h1 (leaf 1).
  EXPECT_LT(svg.find("<title>h2.nic0</title>"), svg.find("<title>h1.nic0</title>"));
}

TEST(TopologySvgTest, SuperSpinesMakeAFourthRowOnTop) {
  FabricLink up = fabric_link(0, 0, 5, 5);
  FabricLink top;
  top.lower = "spine0";
  top.upper = "super0";
  top.name = "spine0-super0";
  top.spine_link = true;
  top.lower_end.tx_bytes = 5;
  const std::string svg = topology_svg({host_link(0, 0, 5, 5), up, top}, "t3");
  EXPECT_EQ(count(svg, "<g class=\"node\">"), 4u);
  EXPECT_NE(svg.find("viewBox=\"0 0 640 450\""), std::string::npos) << svg;  // four rows
  // Drawn top down: the super-spine first.
  EXPECT_LT(svg.find("<title>super0</title>"), svg.find("<title>spine0</title>"));
  EXPECT_LT(svg.find("<title>spine0</title>"), svg.find("<title>leaf0</title>"));
}

TEST(TopologySvgTest, NothingWithoutLinksAndNamesAreEscaped) {
  EXPECT_EQ(topology_svg({}, "t"), "");
  const std::string svg = topology_svg({fabric_link(0, 0, 1, 1)}, "a<b");
  EXPECT_NE(svg.find("id=\"a&lt;b\""), std::string::npos) << svg;
}

}  // namespace
}  // namespace collide::orchestrator::report
