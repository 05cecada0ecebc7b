#include "injectors/rate_limit.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::injectors {
namespace {

TEST(Tbf, BurstHoldsJumboFramesAndScalesWithRate) {
  EXPECT_GE(default_burst(1'000'000), 9216u);
  EXPECT_EQ(default_burst(200'000'000), 250'000u) << "10 ms at the rate";
  EXPECT_EQ(default_burst(400'000'000'000), 64u * 1024 * 1024) << "capped";
  RateLimitSpec spec{200'000'000, 0, Direction::kEgress};
  EXPECT_EQ(tbf_args(spec), (std::vector<std::string>{"rate", "200000000bit", "burst", "250000",
                                                      "latency", "50ms"}));
  spec.burst_bytes = 100000;
  EXPECT_EQ(tbf_args(spec)[3], "100000");
}

TEST(EgressParent, ReplacesDefaultsNestsUnderTbfRefusesTheRest) {
  EXPECT_EQ(egress_parent(R"([{"kind":"noqueue","handle":"0:","root":true}])").value(), "root");
  EXPECT_EQ(egress_parent(R"([{"kind":"mq","handle":"0:","root":true},
                              {"kind":"fq_codel","handle":"0:","parent":":1"}])")
                .value(),
            "root");
  EXPECT_EQ(egress_parent(R"([{"kind":"tbf","handle":"8001:","root":true}])").value(), "8001:1");
  auto htb = egress_parent(R"([{"kind":"htb","handle":"1:","root":true}])");
  ASSERT_THAT(htb, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(htb.status().message().find("htb"), std::string::npos);
  EXPECT_THAT(egress_parent(R"([{"kind":"tbf","handle":"c011:","root":true}])"),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(egress_parent("oops"), StatusIs(StatusCode::kDataLoss));
}

TEST(Ifb, TakesTheFirstFreeName) {
  EXPECT_EQ(next_ifb_name({}), "collide-ifb0");
  EXPECT_EQ(next_ifb_name({"lo", "collide-ifb0", "collide-ifb2"}), "collide-ifb1");
  EXPECT_LE(next_ifb_name({}).size(), 15u) << "interface names are at most 15 characters";
}

}  // namespace
}  // namespace collide::injectors
