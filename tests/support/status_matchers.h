#pragma once

// gMock matchers for Status and Result<T>, so a negative test says which error it expects:
//   EXPECT_THAT(load(path), StatusIs(StatusCode::kInvalidArgument, HasSubstr("line 3")));
//   ASSERT_THAT(open_port(), IsOk());
// A failure prints the status the code really returned (message and code).
//
// They live in namespace collide, not collide::testing, so that a test inside namespace
// collide::<component> finds them without a using-declaration and its own `testing::` still
// names gtest's namespace.

#include <ostream>
#include <string>

#include <gmock/gmock.h>

#include "common/result.h"

namespace collide {

// gtest prints values through PrintTo found by argument-dependent lookup.
inline void PrintTo(StatusCode code, std::ostream* os) { *os << status_code_name(code); }
inline void PrintTo(const Status& status, std::ostream* os) { *os << status.to_string(); }
template <typename T>
void PrintTo(const Result<T>& result, std::ostream* os) {
  if (result.ok()) {
    *os << "a value";
  } else {
    *os << result.status().to_string();
  }
}

namespace status_matchers_internal {

inline const Status& status_of(const Status& status) { return status; }
template <typename T>
const Status& status_of(const Result<T>& result) {
  return result.status();
}

class StatusIsMatcher {
 public:
  StatusIsMatcher(StatusCode code, ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const Status& status = status_of(value);
    if (status.code() != code_) {
      *listener << "whose status is " << status.to_string();
      return false;
    }
    ::testing::StringMatchResultListener inner;
    if (!message_.MatchAndExplain(status.message(), &inner)) {
      *listener << "whose message \"" << status.message() << "\" does not match";
      if (!inner.str().empty()) *listener << ", " << inner.str();
      return false;
    }
    return true;
  }

  void DescribeTo(std::ostream* os) const {
    *os << "has status " << status_code_name(code_) << " and a message that ";
    message_.DescribeTo(os);
  }
  void DescribeNegationTo(std::ostream* os) const {
    *os << "does not have status " << status_code_name(code_) << " or has a message that ";
    message_.DescribeNegationTo(os);
  }

 private:
  StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

class IsOkMatcher {
 public:
  template <typename T>
  bool MatchAndExplain(const T& value, ::testing::MatchResultListener* listener) const {
    const Status& status = status_of(value);
    if (!status.ok()) *listener << "whose status is " << status.to_string();
    return status.ok();
  }
  void DescribeTo(std::ostream* os) const { *os << "is ok"; }
  void DescribeNegationTo(std::ostream* os) const { *os << "is not ok"; }
};

}  // namespace status_matchers_internal

// Matches a Status or Result<T> that holds no error.
inline ::testing::PolymorphicMatcher<status_matchers_internal::IsOkMatcher> IsOk() {
  return ::testing::MakePolymorphicMatcher(status_matchers_internal::IsOkMatcher());
}

// Matches a Status or Result<T> whose error has `code`, and a message that `message` matches
// (a string for equality, or a matcher such as HasSubstr).
template <typename MessageMatcher>
::testing::PolymorphicMatcher<status_matchers_internal::StatusIsMatcher> StatusIs(
    StatusCode code, MessageMatcher&& message) {
  return ::testing::MakePolymorphicMatcher(status_matchers_internal::StatusIsMatcher(
      code, ::testing::MatcherCast<const std::string&>(std::forward<MessageMatcher>(message))));
}
inline ::testing::PolymorphicMatcher<status_matchers_internal::StatusIsMatcher> StatusIs(
    StatusCode code) {
  return StatusIs(code, ::testing::_);
}

}  // namespace collide
