#include "replayer/wire/pfc_frame.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/status_matchers.h"

namespace collide::replayer::wire {
namespace {

PauseFrame priority3(uint16_t quanta) {
  PauseFrame p;
  p.source = *MacAddress::parse("02:00:00:00:00:07");
  p.enabled = 1 << 3;
  p.quanta[3] = quanta;
  return p;
}

TEST(PfcFrameTest, EncodesTheLayoutOf8021Qbb) {
  std::vector<uint8_t> buf(64, 0xee);
  auto len = encode_pfc(priority3(0xffff), buf);
  ASSERT_TRUE(len.ok()) << len.status().to_string();
  ASSERT_EQ(*len, 60u);
  const std::vector<uint8_t> head(buf.begin(), buf.begin() + 36);
  EXPECT_EQ(head, (std::vector<uint8_t>{
                      0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,  // reserved multicast destination
                      0x02, 0x00, 0x00, 0x00, 0x00, 0x07,  // source
                      0x88, 0x08,                          // MAC control
                      0x01, 0x01,                          // PFC
                      0x00, 0x08,                          // class-enable vector: priority 3
                      0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0,  // times of 0..7
                      0x00, 0x00}));                       // padding
  for (size_t i = 34; i < 60; ++i) EXPECT_EQ(buf[i], 0) << i;
  EXPECT_EQ(buf[60], 0xee);  // nothing past the frame
}

TEST(PfcFrameTest, DecodesWhatItEncodes) {
  std::vector<uint8_t> buf(60);
  PauseFrame sent = priority3(1234);
  sent.enabled |= 1 << 6;
  sent.quanta[6] = 7;
  ASSERT_TRUE(encode_pfc(sent, buf).ok());
  ASSERT_TRUE(is_mac_control(buf));
  auto got = decode_pause(buf);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->source, sent.source);
  EXPECT_EQ(got->enabled, sent.enabled);
  EXPECT_EQ(got->quanta, sent.quanta);
  EXPECT_FALSE(got->link_pause);
  EXPECT_TRUE(got->pauses(3));
  EXPECT_TRUE(got->pauses(6));
  EXPECT_FALSE(got->pauses(0));
  EXPECT_FALSE(got->pauses(8));
}

TEST(PfcFrameTest, An8023xPauseHoldsEveryPriority) {
  std::vector<uint8_t> buf(60, 0);
  ASSERT_TRUE(encode_pfc(priority3(0), buf).ok());
  buf[14] = 0x00;  // opcode 0x0001: 802.3x PAUSE
  buf[15] = 0x01;
  buf[16] = 0x01;  // its one pause time, 0x0102
  buf[17] = 0x02;
  auto got = decode_pause(buf);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_TRUE(got->link_pause);
  EXPECT_EQ(got->enabled, 0xff);
  for (uint16_t q : got->quanta) EXPECT_EQ(q, 0x0102);
}

TEST(PfcFrameTest, RefusesWhatIsNotAPause) {
  std::vector<uint8_t> buf(60, 0);
  ASSERT_TRUE(encode_pfc(priority3(1), buf).ok());
  std::vector<uint8_t> other = buf;
  other[15] = 0x02;  // opcode 0x0102 (not PAUSE or PFC)
  EXPECT_THAT(decode_pause(other), StatusIs(StatusCode::kInvalidArgument));
  other = buf;
  other[16] = 0x01;  // reserved upper bits of the enable vector
  EXPECT_THAT(decode_pause(other), StatusIs(StatusCode::kInvalidArgument));
  other = buf;
  other[12] = 0x08;  // IPv4
  other[13] = 0x00;
  EXPECT_FALSE(is_mac_control(other));
  EXPECT_THAT(decode_pause(other), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(decode_pause(std::span<const uint8_t>(buf).first(20)),
              StatusIs(StatusCode::kInvalidArgument));
  std::vector<uint8_t> small(40);
  EXPECT_THAT(encode_pfc(priority3(1), small), StatusIs(StatusCode::kInvalidArgument));
}

TEST(PfcFrameTest, AQuantumIs512BitTimes) {
  EXPECT_EQ(pause_quanta_ns(1, 100), 5u);          // 512 bits at 100 Gb/s: 5.12 ns
  EXPECT_EQ(pause_quanta_ns(0xffff, 100), 335539u);  // the longest pause at 100G: 335.5 us
  EXPECT_EQ(pause_quanta_ns(1000, 1), 512000u);
  EXPECT_EQ(pause_quanta_ns(10, 0), 0u);
}

}  // namespace
}  // namespace collide::replayer::wire
