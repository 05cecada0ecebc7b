#include "common/bytes.h"

#include <array>

#include <gtest/gtest.h>

namespace collide::bytes {
namespace {

TEST(BytesTest, BigEndianRoundTrips) {
  std::array<uint8_t, 8> buf{};
  store_be16(buf.data(), 0x12b7);
  EXPECT_EQ(buf[0], 0x12);
  EXPECT_EQ(buf[1], 0xb7);
  EXPECT_EQ(load_be16(buf.data()), 0x12b7);

  store_be24(buf.data(), 0xabcdef);
  EXPECT_EQ((std::array<uint8_t, 3>{buf[0], buf[1], buf[2]}),
            (std::array<uint8_t, 3>{0xab, 0xcd, 0xef}));
  EXPECT_EQ(load_be24(buf.data()), 0xabcdefu);

  store_be32(buf.data(), 0xdeadbeef);
  EXPECT_EQ(buf[0], 0xde);
  EXPECT_EQ(load_be32(buf.data()), 0xdeadbeefu);

  store_be64(buf.data(), 0x0102030405060708ull);
  EXPECT_EQ(buf[0], 0x01);
  EXPECT_EQ(buf[7], 0x08);
  EXPECT_EQ(load_be64(buf.data()), 0x0102030405060708ull);
}

TEST(BytesTest, LittleEndianRoundTrips) {
  std::array<uint8_t, 4> buf{};
  store_le32(buf.data(), 0x2a00fd82);
  EXPECT_EQ(buf, (std::array<uint8_t, 4>{0x82, 0xfd, 0x00, 0x2a}));
  EXPECT_EQ(load_le32(buf.data()), 0x2a00fd82u);
}

}  // namespace
}  // namespace collide::bytes
