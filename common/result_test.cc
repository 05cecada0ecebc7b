#include "common/result.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>

#include "tests/support/status_matchers.h"

namespace collide {
namespace {

Result<int> parse_positive(int v) {
  if (v <= 0) return invalid_argument("must be positive");
  return v;
}

Status add_one(int v, int& out) {
  auto parsed = parse_positive(v);
  if (!parsed.ok()) return parsed.status().with_context("add_one");
  out = *parsed + 1;
  return {};
}

TEST(ResultTest, CarriesValueOrStatus) {
  auto good = parse_positive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  EXPECT_TRUE(good.status().ok());

  auto bad = parse_positive(-1);
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "must be positive");
}

TEST(ResultTest, ContextIsPrefixed) {
  int out = 0;
  Status s = add_one(0, out);
  EXPECT_EQ(s.message(), "add_one: must be positive");
  EXPECT_EQ(s.to_string(), "add_one: must be positive (invalid argument)");
  EXPECT_TRUE(add_one(4, out).ok());
  EXPECT_EQ(out, 5);
}

TEST(ResultTest, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> taken = std::move(r).value();
  EXPECT_EQ(*taken, 7);
}

TEST(ResultTest, ReturnIfErrorPropagates) {
  auto f = [](bool fail) -> Status {
    COLLIDE_RETURN_IF_ERROR(fail ? unavailable("gone") : Status{});
    return internal_error("reached the end");
  };
  EXPECT_EQ(f(true).code(), StatusCode::kUnavailable);
  EXPECT_EQ(f(false).code(), StatusCode::kInternal);
}

TEST(ResultTest, ErrnoMapsToCodes) {
  EXPECT_EQ(errno_status(EPERM, "attach").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(errno_status(ENODEV, "open").code(), StatusCode::kNotFound);
  EXPECT_EQ(errno_status(EOPNOTSUPP, "link").code(), StatusCode::kUnavailable);
  EXPECT_NE(errno_status(EPERM, "attach").message().find("attach: "), std::string::npos);
}

}  // namespace
}  // namespace collide
