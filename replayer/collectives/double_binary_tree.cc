#include "replayer/collectives/double_binary_tree.h"

namespace collide::replayer::collectives {
namespace {

// The binary tree NCCL builds from the bits of a position: the lowest set bit of p gives its
// level; its parent clears that bit and sets the next one up, or only clears it when that parent
// would fall outside the range. Position 0 is the root.
int32_t btree_parent(uint32_t n, uint32_t p) {
  if (p == 0) return -1;
  uint32_t bit = 1;
  while ((bit & p) == 0) bit <<= 1;
  uint32_t up = (p ^ bit) | (bit << 1);
  if (up >= n) up = p ^ bit;
  return static_cast<int32_t>(up);
}

}  // namespace

std::vector<TreeLinks> double_binary_tree(uint32_t n, int which) {
  // Tree 1 is tree 0 over relabelled positions: mirrored for even n, shifted by one for odd n,
  // which makes most interior positions of one tree leaves of the other.
  auto to_tree = [&](uint32_t p) {
    return which == 0 ? p : (n % 2 == 0 ? n - 1 - p : (p + n - 1) % n);
  };
  auto from_tree = [&](uint32_t t) {
    return which == 0 ? t : (n % 2 == 0 ? n - 1 - t : (t + 1) % n);
  };
  std::vector<TreeLinks> links(n);
  for (uint32_t p = 0; p < n; ++p) {
    const int32_t parent = btree_parent(n, to_tree(p));
    if (parent < 0) continue;
    const uint32_t parent_pos = from_tree(static_cast<uint32_t>(parent));
    links[p].parent = static_cast<int32_t>(parent_pos);
    links[parent_pos].children.push_back(p);
  }
  return links;
}

}  // namespace collide::replayer::collectives
