#include "common/result.h"

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace collide {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kPermissionDenied: return "permission denied";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kDataLoss: return "data loss";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown";
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, fmt::format("{}: {}", context, message_));
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return fmt::format("{} ({})", message_, status_code_name(code_));
}

Status invalid_argument(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}
Status not_found(std::string message) { return {StatusCode::kNotFound, std::move(message)}; }
Status permission_denied(std::string message) {
  return {StatusCode::kPermissionDenied, std::move(message)};
}
Status unavailable(std::string message) { return {StatusCode::kUnavailable, std::move(message)}; }
Status failed_precondition(std::string message) {
  return {StatusCode::kFailedPrecondition, std::move(message)};
}
Status deadline_exceeded(std::string message) {
  return {StatusCode::kDeadlineExceeded, std::move(message)};
}
Status data_loss(std::string message) { return {StatusCode::kDataLoss, std::move(message)}; }
Status internal_error(std::string message) { return {StatusCode::kInternal, std::move(message)}; }

Status errno_status(int errnum, std::string_view what) {
  std::string message = fmt::format("{}: {}", what, std::strerror(errnum));
  switch (errnum) {
    case EPERM:
    case EACCES: return permission_denied(std::move(message));
    case ENOENT:
    case ENODEV:
    case ENXIO: return not_found(std::move(message));
    case EINVAL:
    case E2BIG: return invalid_argument(std::move(message));
    case EOPNOTSUPP:
    case ENOSYS:
    case EBUSY:
    case EAGAIN:
    case ENOMEM: return unavailable(std::move(message));
    case ETIMEDOUT: return deadline_exceeded(std::move(message));
    default: return internal_error(std::move(message));
  }
}

}  // namespace collide
