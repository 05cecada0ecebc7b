#include "common/units.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::units {
namespace {

TEST(UnitsTest, KilobyteIsSiAndKibibyteIsIec) {
  EXPECT_EQ(*parse_bytes("1KB"), 1000u);
  EXPECT_EQ(*parse_bytes("1kb"), 1000u);
  EXPECT_EQ(*parse_bytes("1KiB"), 1024u);
  EXPECT_EQ(*parse_bytes("1.5MB"), 1'500'000u);
  EXPECT_EQ(*parse_bytes("512KiB"), 524'288u);
  EXPECT_EQ(*parse_bytes("2 GiB"), 2ull << 30);
  EXPECT_EQ(*parse_bytes("1500"), 1500u);
  EXPECT_EQ(*parse_bytes("64k"), 65'536u);  // tc's notation
}

TEST(UnitsTest, RefusesUnknownUnitsFractionsOfBytesAndNonNumbers) {
  EXPECT_THAT(parse_bytes("3 furlongs"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_bytes("1.5B"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_bytes("-1KB"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_bytes("KB"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(parse_bytes("4 parsecs").status().message().find("'4 parsecs'"), std::string::npos);
}

TEST(UnitsTest, Durations) {
  EXPECT_EQ(parse_duration("200ms")->count(), 200'000'000);
  EXPECT_EQ(parse_duration("1.5s")->count(), 1'500'000'000);
  EXPECT_EQ(parse_duration("40us")->count(), 40'000);
  EXPECT_EQ(parse_duration("2")->count(), 2'000'000'000);
  EXPECT_EQ(parse_duration("1m")->count(), 60'000'000'000);
  EXPECT_THAT(parse_duration("3 fortnights"), StatusIs(StatusCode::kInvalidArgument));
}

TEST(UnitsTest, DurationsAreWrittenInTheirLargestWholeUnitAndReadBack) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(format_duration(std::chrono::hours(8)), "8h");
  EXPECT_EQ(format_duration(std::chrono::minutes(90)), "90m");
  EXPECT_EQ(format_duration(std::chrono::seconds(90)), "90s");
  EXPECT_EQ(format_duration(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(format_duration(nanoseconds(1'000'001)), "1000001ns");
  EXPECT_EQ(format_duration(nanoseconds(0)), "0s");
  for (const int64_t ns : {int64_t{12'000'000'000}, int64_t{5'400'000'000'000}, int64_t{7}, int64_t{40'000}}) {
    EXPECT_EQ(parse_duration(format_duration(nanoseconds(ns)))->count(), ns) << format_duration(nanoseconds(ns));
  }
}

TEST(UnitsTest, RatesAreBitsPerSecond) {
  EXPECT_EQ(*bits_per_s_per_unit("Gbit"), 1e9);
  EXPECT_FALSE(bits_per_s_per_unit("GB").has_value());
}

}  // namespace
}  // namespace collide::units
