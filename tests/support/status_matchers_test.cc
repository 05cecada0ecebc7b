#include "tests/support/status_matchers.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace collide {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Result<int> parsed(int value) { return value; }
Result<int> refused() { return invalid_argument("line 3: port must be a number"); }

// What a matcher says about a value when it does not match.
template <typename M, typename T>
std::string explain(const M& matcher, const T& value) {
  ::testing::StringMatchResultListener listener;
  ::testing::Matcher<const T&>(matcher).MatchAndExplain(value, &listener);
  return listener.str();
}

TEST(StatusMatchersTest, IsOkMatchesStatusAndResultWithoutError) {
  EXPECT_THAT(Status(), IsOk());
  EXPECT_THAT(parsed(7), IsOk());
  EXPECT_THAT(not_found("no such device"), Not(IsOk()));
  EXPECT_THAT(refused(), Not(IsOk()));
}

TEST(StatusMatchersTest, StatusIsMatchesOnlyTheSameCode) {
  EXPECT_THAT(refused(), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(refused(), Not(StatusIs(StatusCode::kNotFound)));
  EXPECT_THAT(unavailable("busy"), StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(unavailable("busy"), Not(StatusIs(StatusCode::kInternal)));
  // A value is not an error of any code.
  EXPECT_THAT(parsed(7), Not(StatusIs(StatusCode::kInvalidArgument)));
  EXPECT_THAT(Status(), StatusIs(StatusCode::kOk));
}

TEST(StatusMatchersTest, StatusIsChecksTheMessageWhenGivenOne) {
  EXPECT_THAT(refused(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("line 3")));
  EXPECT_THAT(refused(), StatusIs(StatusCode::kInvalidArgument, "line 3: port must be a number"));
  EXPECT_THAT(refused(), Not(StatusIs(StatusCode::kInvalidArgument, HasSubstr("line 4"))));
  EXPECT_THAT(refused(), Not(StatusIs(StatusCode::kNotFound, HasSubstr("line 3"))));
}

TEST(StatusMatchersTest, AWrongCodeFailsTheTestAndPrintsTheStatus) {
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(refused(), StatusIs(StatusCode::kNotFound)),
                          "line 3: port must be a number (invalid argument)");
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(refused(), IsOk()),
                          "whose status is line 3: port must be a number (invalid argument)");
  EXPECT_NONFATAL_FAILURE(EXPECT_THAT(parsed(7), StatusIs(StatusCode::kInvalidArgument)),
                          "has status invalid argument");
}

TEST(StatusMatchersTest, AWrongMessageIsExplained) {
  EXPECT_EQ(explain(StatusIs(StatusCode::kInvalidArgument, HasSubstr("line 4")),
                    refused()),
            "whose message \"line 3: port must be a number\" does not match");
  EXPECT_EQ(explain(StatusIs(StatusCode::kDataLoss), Status(internal_error("boom"))),
            "whose status is boom (internal error)");
}

}  // namespace
}  // namespace collide
