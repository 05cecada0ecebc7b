#include "replayer/collectives/double_binary_tree.h"

#include <gtest/gtest.h>

namespace collide::replayer::collectives {
namespace {

// Checks one tree: one root, parent/child links agree, at most two children, every position
// reaches the root (so it is connected and acyclic).
void check_tree(const std::vector<TreeLinks>& t, uint32_t n) {
  uint32_t roots = 0;
  for (uint32_t p = 0; p < n; ++p) {
    if (t[p].parent < 0) ++roots;
    EXPECT_LE(t[p].children.size(), 2u) << "position " << p;
    for (uint32_t c : t[p].children) EXPECT_EQ(t[c].parent, static_cast<int32_t>(p));
    uint32_t hops = 0;
    for (int32_t q = static_cast<int32_t>(p); q >= 0; q = t[static_cast<uint32_t>(q)].parent) {
      ASSERT_LE(++hops, n) << "cycle through position " << p;
    }
  }
  EXPECT_EQ(roots, 1u);
}

TEST(DoubleBinaryTreeTest, BothTreesAreValidForEverySize) {
  for (uint32_t n = 1; n <= 300; ++n) {
    SCOPED_TRACE(n);
    check_tree(double_binary_tree(n, 0), n);
    check_tree(double_binary_tree(n, 1), n);
  }
}

TEST(DoubleBinaryTreeTest, InteriorPositionsOfOneTreeAreMostlyLeavesOfTheOther) {
  for (uint32_t n : {8u, 16u, 64u, 127u, 128u}) {
    const auto t0 = double_binary_tree(n, 0);
    const auto t1 = double_binary_tree(n, 1);
    uint32_t interior_in_both = 0;
    for (uint32_t p = 0; p < n; ++p) {
      if (!t0[p].children.empty() && !t1[p].children.empty()) ++interior_in_both;
    }
    EXPECT_LE(interior_in_both, 2u) << "n=" << n;
  }
}

TEST(DoubleBinaryTreeTest, DepthIsLogarithmic) {
  const uint32_t n = 1024;
  const auto t = double_binary_tree(n, 0);
  uint32_t max_depth = 0;
  for (uint32_t p = 0; p < n; ++p) {
    uint32_t depth = 0;
    for (int32_t q = t[p].parent; q >= 0; q = t[static_cast<uint32_t>(q)].parent) ++depth;
    max_depth = std::max(max_depth, depth);
  }
  EXPECT_LE(max_depth, 11u);
}

}  // namespace
}  // namespace collide::replayer::collectives
