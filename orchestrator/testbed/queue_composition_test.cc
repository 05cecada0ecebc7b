#include "orchestrator/testbed/queue_composition.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::testbed {
namespace {

using Bytes = std::vector<uint64_t>;

TEST(QueueCompositionTest, TheBacklogIsTheNewestBytesEnqueued) {
  QueueComposition q(3, 1'000'000);
  q.record({0, 0, 0});
  q.record({1000, 0, 0});     // 1000 from ingress 0
  q.record({1000, 3000, 0});  // then 3000 from ingress 1
  EXPECT_EQ(q.held_by_ingress(3000), (Bytes{0, 3000, 0}));
  EXPECT_EQ(q.held_by_ingress(4000), (Bytes{1000, 3000, 0}));
  // Within one look's arrivals the makeup is that look's mix.
  q.record({2000, 4000, 0});  // 1000 and 1000 together
  EXPECT_EQ(q.held_by_ingress(1000), (Bytes{500, 500, 0}));
  EXPECT_EQ(q.held_by_ingress(2000), (Bytes{1000, 1000, 0}));
  EXPECT_EQ(q.held_by_ingress(5000), (Bytes{1000, 4000, 0}));
  EXPECT_EQ(q.held_by_ingress(0), (Bytes{0, 0, 0}));
}

TEST(QueueCompositionTest, AStalledQueueKeepsItsMakeupAndNothingIsKnownBeforeTwoLooks) {
  QueueComposition q(2, 1'000'000);
  EXPECT_EQ(q.held_by_ingress(500), (Bytes{0, 0}));
  q.record({0, 0});
  q.record({0, 800});
  for (int i = 0; i < 10; ++i) q.record({0, 800});  // paused: nothing arrives
  EXPECT_EQ(q.held_by_ingress(800), (Bytes{0, 800}));
}

TEST(QueueCompositionTest, ForgetsWhatNoBacklogCanReach) {
  QueueComposition q(1, 10'000);
  for (uint64_t total = 0; total <= 1'000'000; total += 1000) q.record({total});
  // The full history is kept only as deep as the queue: 10 kB (plus one look).
  EXPECT_EQ(q.held_by_ingress(10'000), (Bytes{10'000}));
  EXPECT_EQ(q.held_by_ingress(50'000), (Bytes{50'000}));  // deeper than known: the same mix
}

}  // namespace
}  // namespace collide::orchestrator::testbed
