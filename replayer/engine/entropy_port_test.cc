#include "replayer/engine/entropy_port.h"

#include <set>

#include <gtest/gtest.h>

namespace collide::replayer::engine {
namespace {

TEST(EntropyPortTest, VariesPerQpAndStaysInTheDynamicRange) {
  std::set<uint16_t> ports;
  for (uint32_t qp = 0; qp < 64; ++qp) {
    const uint16_t p = entropy_port(0, 2, (1u << 23) | qp, 0);
    EXPECT_GE(p, 0xc000);
    ports.insert(p);
  }
  EXPECT_GE(ports.size(), 60u);
}

TEST(EntropyPortTest, TheSeedMovesEveryQpsPortAndRepeats) {
  int moved = 0;
  for (uint32_t qp = 0; qp < 32; ++qp) {
    const uint32_t qpn = (1u << 23) | qp;
    EXPECT_EQ(entropy_port(1, 3, qpn, 17), entropy_port(1, 3, qpn, 17));
    moved += entropy_port(1, 3, qpn, 17) != entropy_port(1, 3, qpn, 18);
    EXPECT_GE(entropy_port(1, 3, qpn, 17), 0xc000);
  }
  EXPECT_GE(moved, 30);
  // Unseeded ports are the ones a run without Runs.seed always had.
  EXPECT_EQ(entropy_port(0, 1, 1u << 23, 0), entropy_port(0, 1, 1u << 23, 0));
}

TEST(EntropyPortTest, EachRepetitionOfASeedIsAnotherLaunch) {
  EXPECT_EQ(entropy_seed(0, 0), 0u);
  std::set<uint64_t> seeds;
  for (uint64_t s : {0u, 1u, 2u}) {
    for (uint32_t rep = 0; rep < 4; ++rep) seeds.insert(entropy_seed(s, rep));
  }
  EXPECT_EQ(seeds.size(), 12u);
  EXPECT_EQ(entropy_seed(5, 3), entropy_seed(5, 3));
}

}  // namespace
}  // namespace collide::replayer::engine
