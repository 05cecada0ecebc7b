#include "orchestrator/report/soak_hours.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::report {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

RunLogEntry run(const std::string& variant, Clock::time_point started, std::optional<double> jct_s,
                double p99_us = 100, uint64_t retransmitted = 0) {
  RunLogEntry e;
  e.variant = variant;
  e.started = started;
  e.jct_s = jct_s;
  e.failed = !jct_s;
  e.p99_us = p99_us;
  e.retransmitted_packets = retransmitted;
  return e;
}

TEST(SoakHoursTest, RowsPerHourAndVariantWithTheHoursOwnBaseline) {
  const Clock::time_point t0 = Clock::time_point{} + 1000h;  // any start: hours count from the first run
  SoakHours hours;
  // Hour 0: baseline 1.0 s, loss 1.5 s (one run of loss failed). Hour 2: the job got slower.
  // Hour 1 is empty (a soak paused by the machine, say); it gets no rows.
  hours.add(run("baseline", t0, 1.0));
  hours.add(run("loss", t0 + 2s, 1.5, 300, 40));
  hours.add(run("baseline", t0 + 10min, 1.0));
  hours.add(run("loss", t0 + 10min + 2s, std::nullopt, 900, 60));
  hours.add(run("baseline", t0 + 2h + 5s, 2.0));
  hours.add(run("loss", t0 + 2h + 7s, 5.0, 5000, 7));
  const std::vector<SoakHourRow> rows = hours.rows();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].hour, 0u);
  EXPECT_EQ(rows[0].variant, "baseline");
  EXPECT_EQ(rows[0].runs, 2u);
  EXPECT_NEAR(rows[0].jct_p50_s, 1.0, 0.01);
  EXPECT_FALSE(rows[0].slowdown);
  EXPECT_EQ(rows[1].variant, "loss");
  EXPECT_EQ(rows[1].runs, 2u);
  EXPECT_EQ(rows[1].failed_runs, 1u);
  EXPECT_NEAR(rows[1].jct_max_s, 1.5, 1e-12);
  ASSERT_TRUE(rows[1].slowdown);
  EXPECT_NEAR(*rows[1].slowdown, 1.5, 0.03);
  EXPECT_EQ(rows[1].worst_p99_us, 900);
  EXPECT_EQ(rows[1].retransmitted_packets, 100u);
  EXPECT_EQ(rows[2].hour, 2u);
  EXPECT_EQ(rows[2].variant, "baseline");
  EXPECT_EQ(rows[3].hour, 2u);
  ASSERT_TRUE(rows[3].slowdown);
  EXPECT_NEAR(*rows[3].slowdown, 2.5, 0.05);  // against hour 2's baseline, not hour 0's
}

TEST(SoakHoursTest, ARunNeverStartedCountsInTheHourOfTheRunBeforeIt) {
  const Clock::time_point t0 = Clock::time_point{} + 5h;
  SoakHours hours(1min);
  hours.add(run("baseline", t0, 1.0));
  hours.add(run("baseline", t0 + 3min, 1.0));
  hours.add(run("loss", Clock::time_point{}, std::nullopt));  // stopped before its start
  const std::vector<SoakHourRow> rows = hours.rows();
  ASSERT_EQ(rows.size(), 3u);  // baseline in "hours" 0 and 3, loss in 3
  EXPECT_EQ(rows[1].hour, 3u);
  EXPECT_EQ(rows[1].variant, "baseline");
  EXPECT_EQ(rows[2].hour, 3u);
  EXPECT_EQ(rows[2].variant, "loss");
  EXPECT_EQ(rows[2].failed_runs, 1u);
  EXPECT_EQ(rows[2].jct_p50_s, 0);
  EXPECT_FALSE(rows[2].slowdown) << "no completed run of its own to compare";
}

}  // namespace
}  // namespace collide::orchestrator::report
