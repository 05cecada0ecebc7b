#include "common/parse_number.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "tests/support/status_matchers.h"

namespace collide {
namespace {

template <typename T>
std::string error_of(std::string_view text, int base = 10) {
  auto r = parse_number<T>(text, "the field", base);
  EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument)) << "'" << text << "' parsed";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(ParseNumberTest, ReadsWholeIntegers) {
  EXPECT_EQ(*parse_number<uint16_t>("7411", "port"), 7411);
  EXPECT_EQ(*parse_number<int>("-12", "offset"), -12);
  EXPECT_EQ(*parse_number<uint64_t>("18446744073709551615", "n"), UINT64_MAX);
  EXPECT_EQ(*parse_number<int64_t>("-9223372036854775808", "n"), INT64_MIN);
  EXPECT_EQ(*parse_number<uint32_t>("0", "n"), 0u);
}

TEST(ParseNumberTest, ReadsHexadecimalWithoutPrefix) {
  EXPECT_EQ(*parse_number<uint32_t>("0100A8C0", "gateway", 16), 0x0100A8C0u);
  EXPECT_EQ(*parse_number<unsigned>("ff", "flags", 16), 0xffu);
  EXPECT_EQ(*parse_number<unsigned>("0x2", "flags", 16), 2u);
  EXPECT_EQ(*parse_number<unsigned>("0X2f", "flags", 16), 0x2fu);
  EXPECT_EQ(error_of<unsigned>("0x", 16), "the field: '0x' is not a hexadecimal number");
  EXPECT_EQ(error_of<unsigned>("0x-2", 16), "the field: '0x-2' is not a hexadecimal number");
  EXPECT_EQ(error_of<unsigned>("0x2"), "the field: '0x2' is not a non-negative whole number");
  EXPECT_EQ(error_of<unsigned>("fg", 16), "the field: 'fg' is not a hexadecimal number");
}

TEST(ParseNumberTest, RefusesTextThatIsNotWhollyANumber) {
  EXPECT_EQ(error_of<int>(""), "the field: '' is not a whole number");
  EXPECT_EQ(error_of<int>("abc"), "the field: 'abc' is not a whole number");
  EXPECT_EQ(error_of<int>("12abc"), "the field: '12abc' is not a whole number");
  EXPECT_EQ(error_of<int>(" 12"), "the field: ' 12' is not a whole number");
  EXPECT_EQ(error_of<int>("12 "), "the field: '12 ' is not a whole number");
  EXPECT_EQ(error_of<int>("+12"), "the field: '+12' is not a whole number");
  EXPECT_EQ(error_of<int>("1.5"), "the field: '1.5' is not a whole number");
  // std::stoul would have wrapped this round to 18446744073709551611.
  EXPECT_EQ(error_of<uint64_t>("-5"), "the field: '-5' is not a non-negative whole number");
}

TEST(ParseNumberTest, RefusesValuesOutsideTheType) {
  EXPECT_EQ(error_of<uint16_t>("65536"), "the field: 65536 is out of range (0 to 65535)");
  EXPECT_EQ(error_of<int8_t>("-129"), "the field: -129 is out of range (-128 to 127)");
  EXPECT_EQ(error_of<uint64_t>("18446744073709551616"),
            "the field: 18446744073709551616 is out of range (0 to 18446744073709551615)");
  EXPECT_EQ(*parse_number<uint8_t>("255", "n"), 255);
}

TEST(ParseNumberTest, ReadsFloatingPoint) {
  EXPECT_DOUBLE_EQ(*parse_number<double>("1.5", "rate"), 1.5);
  EXPECT_DOUBLE_EQ(*parse_number<double>("-2e3", "rate"), -2000.0);
  EXPECT_DOUBLE_EQ(*parse_number<double>("42", "rate"), 42.0);
  EXPECT_FLOAT_EQ(*parse_number<float>("0.25", "p"), 0.25f);
  EXPECT_EQ(error_of<double>("1.5x"), "the field: '1.5x' is not a number");
  EXPECT_EQ(error_of<double>(""), "the field: '' is not a number");
  EXPECT_EQ(error_of<double>("nan"), "the field: 'nan' is not a finite number");
  EXPECT_EQ(error_of<double>("inf"), "the field: 'inf' is not a finite number");
  EXPECT_EQ(error_of<double>("1e999"), "the field: 1e999 is out of range");
}

TEST(ParseNumberTest, ErrorNamesWhatWasParsed) {
  auto r = parse_number<uint32_t>("x", "routes:3 flags", 16);
  ASSERT_THAT(r, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(r.status().message(), "routes:3 flags: 'x' is not a hexadecimal number");
}

}  // namespace
}  // namespace collide
