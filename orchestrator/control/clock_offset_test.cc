#include "orchestrator/control/clock_offset.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::control {
namespace {

// A fake pair of clocks: the agent's runs `offset` ahead of the orchestrator's; each exchange
// takes the given one-way delays and the agent spends `turnaround` answering.
struct FakeNetwork {
  int64_t offset = 0;
  uint64_t now = 1'000'000'000;
  std::vector<std::pair<uint64_t, uint64_t>> delays;  // (to agent, back) per exchange
  uint64_t turnaround = 5'000;
  size_t next = 0;

  uint64_t clock() { return now; }
  Result<AgentTimes> exchange(uint64_t t0) {
    EXPECT_EQ(t0, now);
    const auto [out, back] = delays.at(next++);
    now += out;
    AgentTimes t;
    t.receive_ns = static_cast<uint64_t>(static_cast<int64_t>(now) + offset);
    now += turnaround;
    t.send_ns = static_cast<uint64_t>(static_cast<int64_t>(now) + offset);
    now += back;
    return t;
  }
};

Result<ClockOffset> measure(FakeNetwork& net, int count) {
  return measure_offset([&] { return net.clock(); },
                        [&](uint64_t t0) { return net.exchange(t0); }, count);
}

TEST(ClockOffset, SymmetricDelaysGiveTheExactOffset) {
  FakeNetwork net;
  net.offset = 7'500'000;
  net.delays = {{40'000, 40'000}};
  auto o = measure(net, 1);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->offset_ns, 7'500'000);
  EXPECT_EQ(o->round_trip_ns, 80'000u);
  EXPECT_EQ(o->error_bound_ns, 40'000u);
}

TEST(ClockOffset, TakesTheSampleWithTheShortestRoundTripAndTheTruthIsWithinItsBound) {
  FakeNetwork net;
  net.offset = -3'000'000'000;  // the agent's clock is behind (another host's boot time)
  // Asymmetric and varying: queueing on the way out, then a quiet exchange, then queueing back.
  net.delays = {{900'000, 30'000}, {25'000, 15'000}, {20'000, 700'000}, {300'000, 300'000}};
  auto o = measure(net, 4);
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->samples, 4u);
  EXPECT_EQ(o->round_trip_ns, 40'000u);  // the second exchange
  EXPECT_EQ(o->error_bound_ns, 20'000u);
  // Its asymmetry (25 out, 15 back) puts the estimate 5 us off; the bound covers that.
  EXPECT_EQ(o->offset_ns, -3'000'000'000 + 5'000);
  EXPECT_LE(std::llabs(o->offset_ns - net.offset), static_cast<long long>(o->error_bound_ns));
  // Mapping agent times back onto the orchestrator's clock undoes the offset.
  EXPECT_EQ(o->to_orchestrator(static_cast<uint64_t>(o->to_agent(5'000'000'000))), 5'000'000'000);
}

TEST(ClockOffset, RejectsNoSamplesAndInconsistentOnes) {
  EXPECT_THAT(estimate_offset({}), StatusIs(StatusCode::kInvalidArgument));
  // The agent claims to have answered before it received.
  EXPECT_THAT(estimate_offset({{100, 500, 400, 900}}), StatusIs(StatusCode::kInvalidArgument));
  // The answer arrived before the probe left.
  EXPECT_THAT(estimate_offset({{900, 500, 500, 100}}), StatusIs(StatusCode::kInvalidArgument));
}

TEST(ClockOffset, AFailedExchangeIsAnError) {
  auto o = measure_offset([] { return uint64_t{1}; },
                          [](uint64_t) -> Result<AgentTimes> { return unavailable("gone"); }, 3);
  ASSERT_THAT(o, StatusIs(StatusCode::kUnavailable));
  EXPECT_NE(o.status().message().find("gone"), std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::control
