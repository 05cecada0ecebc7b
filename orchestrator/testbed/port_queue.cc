#include "orchestrator/testbed/port_queue.h"

#include <algorithm>
#include <cmath>

#include <linux/pkt_sched.h>

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

// A two-queue port's tc handles (major << 16 | minor): the root HTB, its one inner class (the line
// rate), the lossless class with its tbf (the pause gate), and the class of everything else with
// its bfifo.
constexpr uint32_t kRootHandle = 0x00010000;         // 1:
constexpr uint32_t kLineClassId = 0x00010001;        // 1:1
constexpr uint32_t kLosslessClassId = 0x00010010;    // 1:10
constexpr uint32_t kLosslessGateHandle = 0x00100000; // 10:
constexpr uint32_t kOtherClassId = 0x00010020;       // 1:20
constexpr uint32_t kOtherQueueHandle = 0x00200000;   // 20:

// A handle or class id as tc writes it: hexadecimal, "10:" or "1:10".
std::string tc_id(uint32_t id) {
  const uint32_t major = id >> 16, minor = id & 0xffff;
  return minor == 0 ? fmt::format("{:x}:", major) : fmt::format("{:x}:{:x}", major, minor);
}

std::vector<std::vector<std::string>> two_queue_commands(const std::string& netns, const std::string& ifname,
                                                         const PortQueue& q, const TbfShape& shape) {
  const auto tc = [&](std::vector<std::string> rest) {
    std::vector<std::string> argv = {"tc", "-n", netns};
    argv.insert(argv.end(), rest.begin(), rest.end());
    return argv;
  };
  const uint64_t kbit = shape.rate_bytes_per_s / kBytesPerKbit;
  const std::string line = fmt::format("{}kbit", kbit);
  const std::string half = fmt::format("{}kbit", std::max<uint64_t>(kbit / 2, 1));
  const std::string burst = std::to_string(shape.burst_bytes);
  const std::string quantum = std::to_string(shape.max_frame_bytes);
  const std::string limit = std::to_string(shape.limit_bytes);
  // Each class is guaranteed half the line and may borrow all of it; `prio` serves the lossless
  // class first whenever both borrow.
  const auto klass = [&](uint32_t parent, uint32_t id, const std::string& rate, const char* prio) {
    std::vector<std::string> rest = {"class", "replace", "dev", ifname, "parent", tc_id(parent), "classid", tc_id(id),
                                     "htb", "rate", rate, "ceil", line, "burst", burst, "cburst", burst, "quantum",
                                     quantum};
    if (prio != nullptr) rest.insert(rest.end(), {"prio", prio});
    return tc(rest);
  };
  const TosMatch tos = priority_tos(*q.lossless_priority);
  // HTB's `default`: the class (a minor of the root) where frames the filter does not match go.
  const std::string others = fmt::format("{:x}", kOtherClassId & 0xffff);
  return {tc({"qdisc", "replace", "dev", ifname, "root", "handle", tc_id(kRootHandle), "htb", "default", others}),
          klass(kRootHandle, kLineClassId, line, nullptr),
          klass(kLineClassId, kLosslessClassId, half, "0"),
          klass(kLineClassId, kOtherClassId, half, "1"),
          tc({"qdisc", "replace", "dev", ifname, "parent", tc_id(kLosslessClassId), "handle",
              tc_id(kLosslessGateHandle), "tbf", "rate", line, "burst", burst, "limit", limit}),
          tc({"qdisc", "replace", "dev", ifname, "parent", tc_id(kOtherClassId), "handle", tc_id(kOtherQueueHandle),
              "bfifo", "limit", limit}),
          tc({"filter", "add", "dev", ifname, "parent", tc_id(kRootHandle), "protocol", "ip", "prio", "1", "u32",
              "match", "ip", "tos", fmt::format("{:#04x}", tos.value), fmt::format("{:#04x}", tos.mask), "flowid",
              tc_id(kLosslessClassId)})};
}

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

TosMatch priority_tos(uint32_t priority) {
  return TosMatch{0xe0, static_cast<uint8_t>((priority & 0x7) << 5)};
}

PauseGate pause_gate(const PortQueue& q, uint32_t mtu) {
  PauseGate gate;
  gate.shape = tbf_shape(q, mtu);
  if (q.lossless_priority) {
    gate.handle = kLosslessGateHandle;
    gate.parent = kLosslessClassId;
    gate.tos = priority_tos(*q.lossless_priority);
  } else {
    gate.handle = kRootHandle;
    gate.parent = TC_H_ROOT;
  }
  return gate;
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
  if (q.lossless_priority) return two_queue_commands(netns, ifname, q, shape);
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
