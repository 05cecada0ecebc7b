#include "orchestrator/testbed/port_telemetry.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::orchestrator::testbed {
namespace {

// `tc -s -j qdisc show` in a leaf's namespace: p0 with a shaper and RED below it, p1 with the
// plain shaper, lo without a queue. Shapes as iproute2 prints them; numbers made up.
constexpr const char* kLeafQdiscs = R"([
 {"kind":"noqueue","handle":"0:","dev":"lo","root":true,"refcnt":2,"options":{},"bytes":0,
  "packets":0,"drops":0,"overlimits":0,"requeues":0,"backlog":0,"qlen":0},
 {"kind":"tbf","handle":"1:","dev":"p0","root":true,"refcnt":2,
  "options":{"rate":125000000,"burst":62500,"lat":8000},"bytes":9084000,"packets":6000,
  "drops":120,"overlimits":4411,"requeues":0,"backlog":151400,"qlen":100},
 {"kind":"red","handle":"10:","dev":"p0","parent":"1:1",
  "options":{"limit":1000000,"min":30000,"max":300000,"ecn":true,"probability":0.25},
  "bytes":9084000,"packets":6000,"drops":120,"overlimits":800,"requeues":0,"backlog":151400,
  "qlen":100,"marked":680,"early":0,"pdrop":120,"other":0},
 {"kind":"tbf","handle":"1:","dev":"p1","root":true,"refcnt":2,
  "options":{"rate":1250000000,"burst":1250000,"lat":20000},"bytes":3000,"packets":2,
  "drops":0,"overlimits":0,"requeues":0,"backlog":0,"qlen":0}
])";

TEST(PortTelemetryTest, ReadsTcQdiscJson) {
  auto q = parse_qdisc_json(kLeafQdiscs);
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  ASSERT_EQ(q->size(), 4u);
  EXPECT_EQ((*q)[1].kind, "tbf");
  EXPECT_TRUE((*q)[1].root);
  EXPECT_FALSE((*q)[2].root);
  EXPECT_EQ((*q)[2].marked, 680u);
  EXPECT_EQ((*q)[1].marked, 0u);  // tbf has no such counter

  // A port is its root's counters and backlog, plus the marks of the RED below it.
  const auto ports = port_samples(*q, 5);
  ASSERT_EQ(ports.size(), 3u);
  const PortSample& p0 = ports.at("p0");
  EXPECT_EQ(p0.t_ns, 5);
  EXPECT_EQ(p0.bytes, 9084000u);
  EXPECT_EQ(p0.packets, 6000u);
  EXPECT_EQ(p0.drops, 120u);
  EXPECT_EQ(p0.marks, 680u);
  EXPECT_EQ(p0.backlog, 151400u);
  EXPECT_EQ(ports.at("p1").bytes, 3000u);
  EXPECT_EQ(ports.at("p1").marks, 0u);
}

TEST(PortTelemetryTest, RefusesWhatIsNotTcsJson) {
  EXPECT_THAT(parse_qdisc_json("qdisc tbf 1: root refcnt 2"),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_qdisc_json(R"({"kind":"tbf"})"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_qdisc_json(R"([{"dev":"p0","bytes":1}])"),
              StatusIs(StatusCode::kInvalidArgument));
  auto negative = parse_qdisc_json(R"([{"kind":"tbf","dev":"p0","root":true,"drops":-1}])");
  ASSERT_THAT(negative, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(negative.status().message().find("'drops'"), std::string::npos) << negative.status().message();
  auto none = parse_qdisc_json("[]");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(PortTelemetryTest, SummarizesCountersDepthAndUtilization) {
  // 1 Gbit/s port sampled every 10 ms for 40 ms (4 intervals into 2 bins): 625000 bytes in each
  // of the first two intervals fills the first bin half, nothing the second.
  std::vector<PortSample> s;
  const uint64_t depth[] = {0, 10000, 40000, 20000, 0};
  const uint64_t sent[] = {100, 625100, 1250100, 1250100, 1250100};
  for (int i = 0; i < 5; ++i) {
    s.push_back({i * 10'000'000LL, sent[i], 1000u + 500u * i, 7u + i, 3u * i, depth[i]});
  }
  const report::PortStats p = summarize_port(s, 1.0, 2);
  EXPECT_EQ(p.bytes, 1250000u);
  EXPECT_EQ(p.packets, 2000u);
  EXPECT_EQ(p.drops, 4u);
  EXPECT_EQ(p.ecn_marks, 12u);
  EXPECT_EQ(p.depth_max_bytes, 40000u);
  // Depths sorted 0 0 10000 20000 40000: p95 is 20000 + 0.8 * 20000.
  EXPECT_EQ(p.depth_p95_bytes, 36000u);
  EXPECT_EQ(p.samples, 5u);
  EXPECT_DOUBLE_EQ(p.bin_seconds, 0.02);
  ASSERT_EQ(p.utilization.size(), 2u);
  EXPECT_NEAR(p.utilization[0], 0.5, 1e-9);  // 1.25 MB of the 2.5 MB 20 ms carry at 1 Gbit/s
  EXPECT_NEAR(p.utilization[1], 0.0, 1e-9);
  // An unshaped port has no line rate to compare with: bytes per bin.
  const report::PortStats raw = summarize_port(s, 0, 2);
  EXPECT_DOUBLE_EQ(raw.utilization[0], 1250000);
  // One sample: counters zero, no bins.
  const report::PortStats one = summarize_port({s[2]}, 1.0, 2);
  EXPECT_EQ(one.bytes, 0u);
  EXPECT_EQ(one.depth_max_bytes, 40000u);
  EXPECT_TRUE(one.utilization.empty());
}

TEST(PortTelemetryTest, PollsSlowerThanABinSpreadTheirBytesOverTheBinsTheyCover) {
  // A port at a steady 0.1 Gbit/s polled every 75 ms for 600 ms, reported in 12 bins of 50 ms:
  // every bin is at the steady rate, none empty and none doubled.
  std::vector<PortSample> s;
  for (int i = 0; i <= 8; ++i) {
    const uint64_t bytes = static_cast<uint64_t>(i) * 937'500u;  // 0.1 Gbit/s for 75 ms
    s.push_back({i * 75'000'000LL, bytes, 0u, 0u, 0u, 0u});
  }
  const report::PortStats p = summarize_port(s, 0.1, 12);
  ASSERT_EQ(p.utilization.size(), 12u);
  for (size_t b = 0; b < p.utilization.size(); ++b) {
    EXPECT_NEAR(p.utilization[b], 1.0, 1e-9) << "bin " << b;
  }
  // The bins still hold every byte counted.
  double total = 0;
  for (double u : summarize_port(s, 0, 12).utilization) total += u;
  EXPECT_NEAR(total, 8 * 937'500.0, 1e-3);
}

}  // namespace
}  // namespace collide::orchestrator::testbed
