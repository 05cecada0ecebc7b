#include "orchestrator/testbed/port_queue.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/process.h"

namespace collide::orchestrator::testbed {
namespace {

constexpr uint32_t kEthernetHeader = 14;
// A profile without a buffer queues what 20 ms at its rate fills, like the plain shaper's
// `latency 20ms`: deep enough that it drops only under sustained overload.
constexpr double kDefaultBufferSeconds = 0.020;
// The profiled shaper lets through at most this much line-rate time at once. A switch port has no
// burst allowance at all, but tbf releases frames from a timer, and a bucket smaller than what the
// rate drains between two timer runs (tens of microseconds under load) would undershoot the rate;
// 100 us keeps the rate and holds back no more than a small fraction of a typical buffer.
constexpr double kShaperBurstSeconds = 100e-6;

uint64_t bytes_in(double gbps, double seconds) {
  return static_cast<uint64_t>(gbps * 1e9 / 8 * seconds);
}

uint64_t rate_kbit(double gbps) { return static_cast<uint64_t>(std::llround(gbps * 1e6)); }
constexpr uint64_t kBytesPerKbit = 125;

uint64_t buffer_of(const v1::PortProfile& p, double gbps) {
  return p.buffer_bytes() != 0 ? p.buffer_bytes() : bytes_in(gbps, kDefaultBufferSeconds);
}

std::optional<ProfileError> check_profile(const std::string& field, const v1::PortProfile& p,
                                          double link_gbps, const char* link_field) {
  if (!std::isfinite(p.gbps()) || p.gbps() < 0) return ProfileError{field + ".gbps", "negative rate"};
  const double gbps = p.gbps() > 0 ? p.gbps() : link_gbps;
  if (gbps <= 0) {
    return ProfileError{field + ".gbps", fmt::format("a port profile needs a rate: set it here or "
                                                     "set {}", link_field)};
  }
  if (!p.has_ecn()) return std::nullopt;
  const v1::EcnMarking& e = p.ecn();
  const uint64_t buffer = buffer_of(p, gbps);
  if (e.kmax_bytes() == 0) return ProfileError{field + ".ecn.kmax_bytes", "ECN marking needs kmax_bytes"};
  if (e.kmin_bytes() > e.kmax_bytes()) {
    return ProfileError{field + ".ecn.kmin_bytes", fmt::format("kmin {} is above kmax {}",
                                                               e.kmin_bytes(), e.kmax_bytes())};
  }
  if (e.kmax_bytes() > buffer) {
    return ProfileError{field + ".ecn.kmax_bytes",
                        fmt::format("kmax {} is beyond the buffer ({} bytes)", e.kmax_bytes(), buffer)};
  }
  if (!(e.pmax() > 0 && e.pmax() <= 1)) {
    return ProfileError{field + ".ecn.pmax", fmt::format("{} is not in (0, 1]", e.pmax())};
  }
  return std::nullopt;
}

// Today's shaper of a port without a profile: rate only, a burst of ~1 ms at the rate (it keeps
// the shaper accurate at veth speeds) and 20 ms of queue behind it.
uint64_t plain_burst_bytes(double gbps) { return std::max<uint64_t>(bytes_in(gbps, 1e-3), 64 * 1024); }

uint32_t at_most_u32(uint64_t v) { return static_cast<uint32_t>(std::min<uint64_t>(v, UINT32_MAX)); }

}  // namespace

uint64_t plain_buffer_bytes(double gbps) {
  // What tc's `latency 20ms` made of it: the rate's 20 ms plus the burst.
  return bytes_in(gbps, kDefaultBufferSeconds) + plain_burst_bytes(gbps);
}

std::optional<ProfileError> check_port_profiles(const v1::VirtualTestbedSpec& s) {
  if (s.has_leaf_down()) {
    if (auto e = check_profile("leaf_down", s.leaf_down(), s.host_link_gbps(), "host_link_gbps")) return e;
  }
  if (s.has_leaf_up()) {
    if (auto e = check_profile("leaf_up", s.leaf_up(), s.fabric_link_gbps(), "fabric_link_gbps")) return e;
  }
  if (s.has_spine_down()) {
    if (auto e = check_profile("spine_down", s.spine_down(), s.fabric_link_gbps(), "fabric_link_gbps")) {
      return e;
    }
  }
  if (s.has_spine_up()) {
    if (auto e = check_profile("spine_up", s.spine_up(), s.super_link_gbps(), "super_link_gbps")) return e;
  }
  if (s.has_super_down()) {
    if (auto e = check_profile("super_down", s.super_down(), s.super_link_gbps(), "super_link_gbps")) return e;
  }
  return std::nullopt;
}

PortQueue port_queue(const std::string& tier, const v1::PortProfile* profile, double link_gbps) {
  PortQueue q;
  q.tier = tier;
  q.gbps = link_gbps;
  if (profile == nullptr) return q;
  q.profiled = true;
  if (profile->gbps() > 0) q.gbps = profile->gbps();
  q.buffer_bytes = buffer_of(*profile, q.gbps);
  if (profile->has_ecn()) {
    q.ecn = true;
    q.kmin_bytes = profile->ecn().kmin_bytes();
    q.kmax_bytes = profile->ecn().kmax_bytes();
    q.pmax = profile->ecn().pmax();
  }
  return q;
}

uint64_t shaper_burst_bytes(const PortQueue& q, uint32_t mtu) {
  return std::max<uint64_t>(bytes_in(q.gbps, kShaperBurstSeconds), 2 * (uint64_t{mtu} + kEthernetHeader));
}

TbfShape tbf_shape(const PortQueue& q, uint32_t mtu) {
  TbfShape shape;
  shape.rate_bytes_per_s = rate_kbit(q.gbps) * kBytesPerKbit;
  shape.burst_bytes = at_most_u32(q.profiled ? shaper_burst_bytes(q, mtu) : plain_burst_bytes(q.gbps));
  shape.limit_bytes = at_most_u32(q.profiled ? q.buffer_bytes : plain_buffer_bytes(q.gbps));
  shape.max_frame_bytes = mtu + kEthernetHeader;
  return shape;
}

std::vector<std::vector<std::string>> port_qdisc_commands(const std::string& netns,
                                                          const std::string& ifname,
                                                          const PortQueue& q, uint32_t mtu) {
  if (q.gbps <= 0) {
    if (q.tier != kTierLeafDown) return {};
    return {{"tc", "-n", netns, "qdisc", "replace", "dev", ifname, "root", "handle", "1:", "pfifo", "limit",
             std::to_string(kHostPortQueueFrames)}};
  }
  // tbf's own queue is a bfifo of `limit` bytes: the buffer, with tail drop at its end. ECN
  // marking, on profiled ports, happens before it, on the port's egress hook (port_ecn_marker.h).
  const TbfShape shape = tbf_shape(q, mtu);
  return {{"tc", "-n", netns, "qdisc", "replace", "dev", ifname, "root", "handle", "1:", "tbf", "rate",
           fmt::format("{}kbit", shape.rate_bytes_per_s / kBytesPerKbit), "burst",
           std::to_string(shape.burst_bytes), "limit", std::to_string(shape.limit_bytes)}};
}

Status apply_port_queue(const std::string& netns, const std::string& ifname, const PortQueue& queue,
                        uint32_t mtu) {
  for (const auto& argv : port_qdisc_commands(netns, ifname, queue, mtu)) {
    COLLIDE_RETURN_IF_ERROR(process::run_checked(argv).with_context(
        fmt::format("setting up the {} queue of {}/{}", queue.tier, netns, ifname)));
  }
  return {};
}

}  // namespace collide::orchestrator::testbed
