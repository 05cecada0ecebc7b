#include "injectors/xdp_record.h"

#include <gtest/gtest.h>

namespace collide::injectors {
namespace {

// Recorded from `ip -j link show dev x0` (iproute2 6.1): one program, then libxdp's dispatcher.
TEST(XdpAttachment, ReadsTheProgramAndItsMode) {
  const auto single = xdp_attachment_from_json(
      R"([{"ifname":"x0","xdp":{"mode":1,"prog":{"id":33753,"name":"xsk_def_prog","tag":"x"}}}])");
  EXPECT_EQ(single.prog_id, 33753u);
  EXPECT_EQ(single.mode, 1);
  const auto multi = xdp_attachment_from_json(
      R"([{"ifname":"x0","xdp":{"mode":4,"attached":[{"mode":2,"prog":{"id":7}}]}}])");
  EXPECT_EQ(multi.prog_id, 7u);
  EXPECT_EQ(multi.mode, 2);
  EXPECT_EQ(xdp_attachment_from_json(R"([{"ifname":"x0"}])").prog_id, 0u);
  EXPECT_EQ(xdp_attachment_from_json("not json").prog_id, 0u);
}

}  // namespace
}  // namespace collide::injectors
