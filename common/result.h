#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace collide {

enum class StatusCode {
  kOk,
  kInvalidArgument,    // the caller's input is wrong; retrying will not help
  kNotFound,           // a named thing (device, file, map entry) does not exist
  kPermissionDenied,   // the process lacks a privilege (root, CAP_BPF, CAP_NET_ADMIN)
  kUnavailable,        // a capability or resource is missing on this host or busy right now
  kFailedPrecondition, // called in the wrong state (e.g. before initialisation)
  kDeadlineExceeded,   // a bounded wait ran out
  kDataLoss,           // data arrived damaged or incomplete
  kInternal,           // a library below us failed in a way we did not expect
};

std::string_view status_code_name(StatusCode code);

// The error half of Result<T>: a code and a message meant for the person running collide.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "context: message", so a caller can say what it was doing when a callee failed.
  Status with_context(std::string_view context) const;
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status invalid_argument(std::string message);
Status not_found(std::string message);
Status permission_denied(std::string message);
Status unavailable(std::string message);
Status failed_precondition(std::string message);
Status deadline_exceeded(std::string message);
Status data_loss(std::string message);
Status internal_error(std::string message);

// Maps an errno value to the closest StatusCode, with strerror in the message.
Status errno_status(int errnum, std::string_view what);

// A value or the Status that explains why there is none. Errors cross library boundaries this way.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(state_);
  }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace collide

// Returns the Status of `expr` from the enclosing function when it is an error.
#define COLLIDE_RETURN_IF_ERROR(expr)              \
  do {                                             \
    if (auto collide_status_ = (expr); !collide_status_.ok()) \
      return collide_status_;                      \
  } while (0)
