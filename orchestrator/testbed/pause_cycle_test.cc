#include "orchestrator/testbed/pause_cycle.h"

#include <gtest/gtest.h>

#include <vector>

namespace collide::orchestrator::testbed {
namespace {

using Queues = std::vector<PausedQueue>;

TEST(PauseCycleTest, FourQueuesEachWaitingOnTheNextAreADeadlock) {
  // The down-up-down cycle of a three-leaf, two-spine fabric with two rerouted hosts:
  // spine0->leaf1 (0), leaf1->spine1 (1), spine1->leaf0 (2), leaf0->spine0 (3), plus a queue
  // towards a slow receiver (4) that the cycle's traffic also waits on.
  const Queues q = {{true, {1, 4}}, {true, {2}}, {true, {3, 4}}, {true, {0}}, {true, {}}};
  EXPECT_EQ(find_pause_cycle(q), (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(PauseCycleTest, TheCycleStartsAtItsLowestQueueWhereverTheSearchEntersIt) {
  const Queues q = {{true, {3}}, {false, {}}, {true, {4}}, {true, {2}}, {true, {3}}};
  EXPECT_EQ(find_pause_cycle(q), (std::vector<size_t>{2, 4, 3}));
}

TEST(PauseCycleTest, AChainOfPausesEndingAtASlowReceiverIsNoDeadlock) {
  // Back-pressure: spine -> leaf -> receiver's port, all paused, none waiting in a circle.
  const Queues q = {{true, {1}}, {true, {2}}, {true, {}}, {true, {1}}};
  EXPECT_TRUE(find_pause_cycle(q).empty());
}

TEST(PauseCycleTest, ACycleThroughAQueueThatIsNotHeldIsDraining) {
  Queues q = {{true, {1}}, {true, {2}}, {false, {0}}};
  EXPECT_TRUE(find_pause_cycle(q).empty());
  q[2].held = true;
  EXPECT_EQ(find_pause_cycle(q), (std::vector<size_t>{0, 1, 2}));
}

TEST(PauseCycleTest, AQueueWaitingOnItselfIsACycleOfOneAndBadIndexesAreIgnored) {
  EXPECT_EQ(find_pause_cycle({{true, {7, 0}}}), (std::vector<size_t>{0}));
  EXPECT_TRUE(find_pause_cycle({}).empty());
  EXPECT_TRUE(find_pause_cycle({{true, {5}}}).empty());
}

TEST(PauseCycleTest, DiamondsWithoutACycleAreSearchedOnce) {
  // 0 -> {1, 2} -> 3 -> ... a long acyclic ladder: every queue is finished once, not per path.
  const size_t n = 2000;
  Queues q(n);
  for (size_t i = 0; i < n; ++i) {
    q[i].held = true;
    if (i + 1 < n) q[i].waits_on.push_back(i + 1);
    if (i + 2 < n) q[i].waits_on.push_back(i + 2);
  }
  EXPECT_TRUE(find_pause_cycle(q).empty());
  q[n - 1].waits_on.push_back(n - 3);
  EXPECT_EQ(find_pause_cycle(q), (std::vector<size_t>{n - 3, n - 2, n - 1}));
}

}  // namespace
}  // namespace collide::orchestrator::testbed
