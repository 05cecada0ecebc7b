#include "replayer/transport/qp_config.h"

#include <cmath>

#include <fmt/format.h>

namespace collide::replayer::transport {

Nanos QpConfig::timeout_ns() const {
  const double base_ns = 4096.0 * std::ldexp(1.0, static_cast<int>(timeout_exponent));
  return static_cast<Nanos>(base_ns * timeout_scale);
}

Status validate(const QpConfig& c) {
  if (c.mtu < 256 || c.mtu > 9000) return invalid_argument(fmt::format("mtu {} not in 256..9000", c.mtu));
  if (c.ack_every == 0) return invalid_argument("ack_every must be at least 1");
  if (c.max_outstanding == 0) return invalid_argument("max_outstanding must be at least 1");
  if (c.timeout_exponent > 31) {
    return invalid_argument(fmt::format("timeout exponent {} not in 0..31", c.timeout_exponent));
  }
  if (c.retry_count > 7) return invalid_argument(fmt::format("retry count {} not in 0..7", c.retry_count));
  if (!(c.timeout_scale > 0)) return invalid_argument("timeout scale must be positive");
  if (c.reorder_packets == 0) return invalid_argument("reorder_packets must be at least 1");
  return {};
}

const char* recovery_name(Recovery recovery) {
  switch (recovery) {
    case Recovery::kGoBackN: return "go-back-n";
    case Recovery::kSelectiveRepeat: return "selective-repeat";
    case Recovery::kOutOfOrder: return "out-of-order";
  }
  return "?";
}

Result<Recovery> parse_recovery(const std::string& name) {
  if (name == "go-back-n" || name == "gbn") return Recovery::kGoBackN;
  if (name == "selective-repeat" || name == "sr" || name == "irn") return Recovery::kSelectiveRepeat;
  if (name == "out-of-order" || name == "ooo") return Recovery::kOutOfOrder;
  return invalid_argument(
      fmt::format("unknown loss recovery '{}' (go-back-n, selective-repeat, out-of-order)", name));
}

}  // namespace collide::replayer::transport
