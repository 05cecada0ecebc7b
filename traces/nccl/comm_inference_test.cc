#include "traces/nccl/comm_inference.h"

#include <gtest/gtest.h>

#include <vector>

namespace collide::traces::nccl {
namespace {

// A sighting of `process` showing all-reduces of the given counts from opCount `first` on.
CommSighting sighting(uint32_t process, int32_t nranks, std::vector<uint64_t> counts,
                      uint64_t first = 0) {
  CommSighting s{process, nranks, {}};
  for (size_t i = 0; i < counts.size(); ++i) {
    s.colls.push_back({first + i, 0, counts[i], v1::OP_KIND_ALL_REDUCE, v1::DATA_TYPE_FLOAT32});
  }
  return s;
}

std::vector<uint32_t> processes_of(const InferredLayout& l, const std::vector<CommSighting>& s,
                                   size_t comm) {
  std::vector<uint32_t> out;
  for (uint32_t i : l.comms[comm].sightings) out.push_back(s[i].process);
  return out;
}

TEST(CommInference, PointersOfOneCommunicatorAreJoined) {
  // Sightings listed in log order (process 1 first); ranks follow the process order.
  const std::vector<CommSighting> s = {sighting(1, 2, {10, 20}), sighting(0, 2, {10, 20})};
  const InferredLayout l = infer_comms(s, 2);
  ASSERT_EQ(l.comms.size(), 1u);
  EXPECT_EQ(l.comms[0].nranks, 2u);
  EXPECT_EQ(processes_of(l, s, 0), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(l.rank, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(l.world_size, 2u);
  EXPECT_TRUE(l.other_worlds.empty());
}

TEST(CommInference, GroupsOfOneSizeAreToldApartByTheirCollectives) {
  // A world of 4 and two strided groups of 2, {0,2} all-reducing 7 elements and {1,3} 9:
  // taking processes in order by nranks alone would pair 0 with 1. Process 2's log starts later.
  const std::vector<CommSighting> s = {
      sighting(0, 4, {100}),   sighting(0, 2, {7, 7}), sighting(1, 4, {100}),
      sighting(1, 2, {9, 9}),  sighting(2, 4, {100}),  sighting(2, 2, {7}, 1),
      sighting(3, 4, {100}),   sighting(3, 2, {9, 9})};
  const InferredLayout l = infer_comms(s, 4);
  ASSERT_EQ(l.comms.size(), 3u);
  EXPECT_EQ(processes_of(l, s, 0), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(processes_of(l, s, 1), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(processes_of(l, s, 2), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(l.world, 0u);
  EXPECT_TRUE(l.other_worlds.empty());
}

TEST(CommInference, OpsSharingAnOpCountAreComparedInTheirPlace) {
  // A group call's collectives share an opCount (and single-node communicators of 2.27+ print 0
  // for all): the second of an opCount is compared with the others' second.
  auto grouped = [](uint32_t process, std::vector<uint64_t> counts) {
    CommSighting s{process, 2, {}};
    for (uint32_t i = 0; i < counts.size(); ++i) {
      s.colls.push_back({0, i, counts[i], v1::OP_KIND_ALL_GATHER, v1::DATA_TYPE_BFLOAT16});
    }
    return s;
  };
  const std::vector<CommSighting> s = {grouped(0, {8, 16, 32}), grouped(1, {8, 16, 32})};
  const InferredLayout l = infer_comms(s, 2);
  ASSERT_EQ(l.comms.size(), 1u);
  EXPECT_EQ(processes_of(l, s, 0), (std::vector<uint32_t>{0, 1}));
}

TEST(CommInference, WorldSizeIsNcclsNranksNotTheProcessesSeen) {
  std::vector<CommSighting> s;
  for (uint32_t p = 0; p < 4; ++p) s.push_back(sighting(p, 128, {5, 6}));
  const InferredLayout l = infer_comms(s, 4);
  ASSERT_EQ(l.comms.size(), 1u);
  EXPECT_EQ(l.comms[0].nranks, 128u);
  EXPECT_EQ(l.world_size, 128u);
  EXPECT_EQ(l.rank, (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST(CommInference, FullCommunicatorsTakeNoMore) {
  // Eight processes running the same all-reduces in groups of 4: neighbours go together.
  std::vector<CommSighting> s;
  for (uint32_t p = 0; p < 8; ++p) s.push_back(sighting(p, 4, {1, 2, 3}));
  const InferredLayout l = infer_comms(s, 8);
  ASSERT_EQ(l.comms.size(), 2u);
  EXPECT_EQ(processes_of(l, s, 0), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(processes_of(l, s, 1), (std::vector<uint32_t>{4, 5, 6, 7}));
  // Two groups of the world's size with no process in common: two jobs.
  EXPECT_EQ(l.other_worlds, (std::vector<uint32_t>{1}));
}

TEST(CommInference, OneProcessDrivingSeveralDevicesIsNamed) {
  // Process 0 prints two pointers of one 2-rank communicator (one per device it drives); process
  // 1 has a tensor- and a data-parallel group of 2 that run different collectives.
  const std::vector<CommSighting> s = {sighting(0, 2, {64, 128}), sighting(0, 2, {64, 128}),
                                       sighting(1, 2, {64, 128}), sighting(1, 2, {8, 9})};
  const InferredLayout l = infer_comms(s, 2);
  EXPECT_EQ(l.several_devices, (std::vector<uint32_t>{0}));
}

TEST(CommInference, UnknownNranksTakesTheMembersFound) {
  const std::vector<CommSighting> s = {sighting(0, -1, {3}), sighting(1, -1, {3}),
                                       sighting(2, -1, {3})};
  const InferredLayout l = infer_comms(s, 3);
  ASSERT_EQ(l.comms.size(), 1u);
  EXPECT_EQ(l.comms[0].nranks, 3u);
  EXPECT_EQ(l.world_size, 3u);
}

}  // namespace
}  // namespace collide::traces::nccl
