#pragma once

#include <cstdint>
#include <vector>

// NCCL's double binary tree (NCCL 2.4+): two binary trees over the same positions such that a
// position that is interior in one tree is (mostly) a leaf in the other, so both halves of the
// buffer travel in parallel without one link carrying both.
namespace collide::replayer::collectives {

struct TreeLinks {
  int32_t parent = -1;           // position, -1 at the root
  std::vector<uint32_t> children;  // positions
};

// Tree `which` (0 or 1) over positions 0..n-1; element p holds position p's links.
std::vector<TreeLinks> double_binary_tree(uint32_t n, int which);

}  // namespace collide::replayer::collectives
