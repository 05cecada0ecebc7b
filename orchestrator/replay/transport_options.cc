#include "orchestrator/replay/transport_options.h"

#include <vector>

#include <fmt/format.h>

namespace collide::orchestrator::replay {
namespace {

constexpr uint32_t kMaxDscp = 63;  // six bits

template <typename T>
T or_default(T value, T fallback) {
  return value != T{} ? value : fallback;
}

}  // namespace

v1::TransportSettings with_defaults(const v1::TransportSettings& s) {
  using D = TransportDefaults;
  v1::TransportSettings t = s;
  t.set_mtu_bytes(or_default(s.mtu_bytes(), D::kMtuBytes));
  t.set_channels(or_default(s.channels(), D::kChannels));
  t.set_qps_per_connection(or_default(s.qps_per_connection(), D::kQpsPerConnection));
  t.set_slice_bytes(or_default(s.slice_bytes(), D::kSliceBytes));
  t.set_timeout_exponent(or_default(s.timeout_exponent(), D::kTimeoutExponent));
  t.set_timeout_scale(or_default(s.timeout_scale(), D::kTimeoutScale));
  t.set_retry_count(or_default(s.retry_count(), D::kRetryCount));
  t.set_ack_every(or_default(s.ack_every(), D::kAckEvery));
  t.set_max_outstanding(or_default(s.max_outstanding(), D::kMaxOutstanding));
  t.set_reorder_window_ns(or_default(s.reorder_window_ns(), D::kReorderWindowNs));
  t.set_reorder_packets(or_default(s.reorder_packets(), D::kReorderPackets));
  if (!s.has_dscp()) t.set_dscp(D::kDscp);
  return t;
}

namespace {

// resolve_transport without the "transport" its errors are given.
Result<TransportOptions> resolve(const v1::TransportSettings& settings) {
  const v1::TransportSettings t = with_defaults(settings);
  if (t.timeout_scale() < 0) return invalid_argument(fmt::format("{} is negative", t.timeout_scale()));
  if (t.dscp() > kMaxDscp) return invalid_argument(fmt::format("{} is not a DSCP (0-{})", t.dscp(), kMaxDscp));
  TransportOptions o;
  o.dscp = static_cast<uint8_t>(t.dscp());
  o.qp.mtu = t.mtu_bytes();
  o.qp.ack_every = t.ack_every();
  o.qp.max_outstanding = t.max_outstanding();
  switch (t.recovery()) {
    case v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT:
      o.qp.recovery = replayer::transport::Recovery::kSelectiveRepeat;
      break;
    case v1::TransportSettings::RECOVERY_OUT_OF_ORDER:
      o.qp.recovery = replayer::transport::Recovery::kOutOfOrder;
      break;
    default:
      o.qp.recovery = replayer::transport::Recovery::kGoBackN;
      break;
  }
  o.qp.timeout_exponent = t.timeout_exponent();
  o.qp.timeout_scale = t.timeout_scale();
  o.qp.retry_count = t.retry_count();
  o.qp.reorder_window_ns = t.reorder_window_ns();
  o.qp.reorder_packets = t.reorder_packets();
  o.dcqcn.enabled = t.dcqcn();
  o.expand.channels = t.channels();
  o.expand.qps_per_connection = t.qps_per_connection();
  o.expand.slice_bytes = t.slice_bytes();
  o.expand.pxn = !t.pxn_disable();
  o.expand.all_reduce = t.all_reduce() == v1::TransportSettings::ALL_REDUCE_TREE
                            ? replayer::collectives::AllReduceAlgorithm::kTree
                            : replayer::collectives::AllReduceAlgorithm::kRing;
  o.expand.ring_order = t.ring_order() == v1::TransportSettings::RING_ORDER_TOPOLOGY
                            ? replayer::collectives::RingOrder::kTopology
                            : replayer::collectives::RingOrder::kRank;
  COLLIDE_RETURN_IF_ERROR(replayer::transport::validate(o.qp));
  COLLIDE_RETURN_IF_ERROR(replayer::collectives::validate(o.expand));
  return o;
}

}  // namespace

std::optional<TransportProblem> transport_problem(const v1::TransportSettings& settings) {
  auto all = resolve(settings);
  if (all.ok()) return std::nullopt;
  // The checks live with the transport and the expander, which know nothing of these fields' names:
  // the field is found by trying each one set alone, over the defaults.
  const auto* refl = settings.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> set;
  refl->ListFields(settings, &set);
  for (const auto* field : set) {
    v1::TransportSettings copy = settings;
    v1::TransportSettings alone;
    refl->SwapFields(&alone, &copy, {field});
    if (auto one = resolve(alone); !one.ok()) return TransportProblem{field->name(), one.status().message()};
  }
  return TransportProblem{"", all.status().message()};
}

Result<TransportOptions> resolve_transport(const v1::TransportSettings& settings) {
  if (auto problem = transport_problem(settings)) {
    return invalid_argument(problem->field.empty() ? fmt::format("transport: {}", problem->what)
                                                   : fmt::format("transport.{}: {}", problem->field, problem->what));
  }
  return resolve(settings);
}

}  // namespace collide::orchestrator::replay
