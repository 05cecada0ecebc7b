#include "orchestrator/testbed/pfc_settings.h"

#include <algorithm>

#include <fmt/format.h>

#include "replayer/engine/pfc_sender.h"

namespace collide::orchestrator::testbed {
namespace {

// CS6: FRR's bgpd and bfdd send with this DSCP (TOS 0xC0).
constexpr uint32_t kNetworkControlDscp = 48;

// The ports of a lossless fabric and their buffers, tier by tier, as the testbed builds them.
struct TierBuffer {
  const char* field;
  uint64_t bytes;
  double gbps;  // the tier's port rate
};

std::vector<TierBuffer> tier_buffers(const v1::VirtualTestbedSpec& s) {
  std::vector<TierBuffer> out;
  auto add = [&](const char* field, const char* tier, const v1::PortProfile* p, double gbps) {
    const PortQueue q = port_queue(tier, p, gbps);
    out.push_back({field, q.profiled ? q.buffer_bytes : plain_buffer_bytes(q.gbps), q.gbps});
  };
  add("leaf_down", kTierLeafDown, s.has_leaf_down() ? &s.leaf_down() : nullptr, s.host_link_gbps());
  if (s.spines() > 0) {
    add("leaf_up", kTierLeafUp, s.has_leaf_up() ? &s.leaf_up() : nullptr, s.fabric_link_gbps());
    add("spine_down", kTierSpineDown, s.has_spine_down() ? &s.spine_down() : nullptr, s.fabric_link_gbps());
  }
  return out;
}

}  // namespace

ResolvedPfc resolve_pfc(const v1::VirtualTestbedSpec& spec) {
  ResolvedPfc r;
  if (!spec.has_pfc()) return r;
  // Resolved even while the testbed is lossy: a variant may turn lossless mode on with these.
  const v1::PfcSettings& p = spec.pfc();
  r.lossless = p.lossless();
  if (p.has_priority()) r.priority = p.priority();
  if (p.quanta() != 0) r.quanta = p.quanta();
  if (p.xoff_bytes() != 0) r.xoff_bytes = p.xoff_bytes();
  r.xon_bytes = p.xon_bytes() != 0 ? p.xon_bytes() : r.xoff_bytes / 2;
  if (p.poll_us() != 0) r.poll = std::chrono::microseconds(p.poll_us());
  if (p.host_xoff_frames() != 0) r.host_xoff_frames = p.host_xoff_frames();
  r.host_xon_frames = p.host_xon_frames() != 0 ? p.host_xon_frames() : r.host_xoff_frames / 4;
  if (p.has_watchdog()) {
    r.watchdog_detect = std::chrono::nanoseconds(p.watchdog().detect_ns());
    if (p.watchdog().restore_ns() != 0) r.watchdog_restore = std::chrono::nanoseconds(p.watchdog().restore_ns());
  }
  return r;
}

std::optional<ProfileError> check_pfc(const v1::VirtualTestbedSpec& spec) {
  if (!spec.has_pfc()) return std::nullopt;
  const v1::PfcSettings& p = spec.pfc();
  if (p.has_priority() && p.priority() > 7) {
    return ProfileError{"pfc.priority", fmt::format("{} is not a priority (0-7)", p.priority())};
  }
  if (p.quanta() > 0xffff) return ProfileError{"pfc.quanta", fmt::format("{} is above 65535", p.quanta())};
  if (p.poll_us() != 0 && std::chrono::microseconds(p.poll_us()) < kMinPfcPoll) {
    return ProfileError{"pfc.poll_us", fmt::format("{} is below {} us: the switches' polls would take a core",
                                                   p.poll_us(), kMinPfcPoll.count())};
  }
  if (!p.lossless()) return std::nullopt;
  const ResolvedPfc r = resolve_pfc(spec);
  if (spec.routing() == v1::VirtualTestbedSpec::ROUTING_BGP && r.priority == priority_of_dscp(kNetworkControlDscp)) {
    // BFD's and BGP's packets would wait in the paused queue with RoCE's, and a long pause would
    // take the links' sessions down; on any other priority they have a queue of their own.
    return ProfileError{"pfc.priority", fmt::format("{} is the priority of BGP's and BFD's packets (DSCP {}): with "
                                                    "routing: bgp a pause would hold them too",
                                                    r.priority, kNetworkControlDscp)};
  }
  if (r.xon_bytes >= r.xoff_bytes) {
    return ProfileError{"pfc.xon_bytes", fmt::format("xon {} is not below xoff {}", r.xon_bytes, r.xoff_bytes)};
  }
  if (r.host_xoff_frames > replayer::engine::kMaxXoffFrames) {
    return ProfileError{"pfc.host_xoff_frames", fmt::format("{} is above {}, what a host's receive buffer holds",
                                                            r.host_xoff_frames, replayer::engine::kMaxXoffFrames)};
  }
  if (r.host_xon_frames >= r.host_xoff_frames) {
    return ProfileError{"pfc.host_xon_frames", fmt::format("{} is not below host_xoff_frames {}",
                                                           r.host_xon_frames, r.host_xoff_frames)};
  }
  if (const uint32_t buffer = spec.host_rx_buffer_frames(); buffer != 0 && r.host_xoff_frames >= buffer) {
    return ProfileError{"pfc.host_xoff_frames",
                        fmt::format("{} is not below host_rx_buffer_frames {}: a NIC would drop before it pauses",
                                    r.host_xoff_frames, buffer)};
  }
  if (spec.host_link_gbps() <= 0 || (spec.spines() > 0 && spec.fabric_link_gbps() <= 0)) {
    return ProfileError{spec.host_link_gbps() <= 0 ? "host_link_gbps" : "fabric_link_gbps",
                        "a lossless fabric needs shaped links: an unshaped port has no queue to hold "
                        "while it is paused"};
  }
  const std::vector<TierBuffer> tiers = tier_buffers(spec);
  // What still arrives once a queue passes xoff: the switch sees it up to a poll late and the peer
  // holds up to a poll after the pause arrives, and on a busy machine each side can be a poll later
  // still; frames come in at up to the fastest link's rate meanwhile. (Measured: xoff 64 KB in a
  // 128 KB buffer fed from a 0.4 Gbit/s link at 500 us polls dropped frames.)
  double fastest_gbps = 0;
  for (const TierBuffer& t : tiers) fastest_gbps = std::max(fastest_gbps, t.gbps);
  const auto headroom = static_cast<uint64_t>(fastest_gbps * 1e9 / 8 * 4 * std::chrono::duration<double>(r.poll).count());
  for (const TierBuffer& t : tiers) {
    if (r.xoff_bytes + headroom > t.bytes) {
      return ProfileError{"pfc.xoff_bytes",
                          fmt::format("{} and the headroom behind it ({} bytes: four polls of {} us at the fastest "
                                      "link's {:g} Gbit/s) do not fit the {} ports' buffer ({} bytes)",
                                      r.xoff_bytes, headroom, r.poll.count(), fastest_gbps, t.field, t.bytes)};
    }
    if (r.xoff_bytes > t.bytes / 2) {
      return ProfileError{"pfc.xoff_bytes",
                          fmt::format("{} leaves the {} ports' buffer ({} bytes) less than half for "
                                      "what arrives while a pause takes effect",
                                      r.xoff_bytes, t.field, t.bytes)};
    }
  }
  return std::nullopt;
}

}  // namespace collide::orchestrator::testbed
