#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "replayer/transport/packet.h"

namespace collide::replayer::transport {

enum class Recovery {
  kGoBackN,          // what RoCE NICs do: a gap makes the sender resend everything from it
  kSelectiveRepeat,  // IRN-like: the receiver keeps out-of-order packets, the sender resends holes
  // Out-of-order placement (NICs with adaptive routing, UEC's RUD): the receiver keeps
  // out-of-order packets and acknowledges selectively, never NAKs; the sender resends a hole only
  // on evidence of loss. Reordering alone (per-packet spraying) then costs nothing.
  kOutOfOrder,
};

struct QpConfig {
  uint32_t mtu = 4096;         // payload bytes per packet (1024 or 4096 on RoCE)
  uint32_t ack_every = 16;     // AckReq on every N-th packet and on each message's last
  uint32_t max_outstanding = 4096;  // packets sent and not yet acknowledged
  Recovery recovery = Recovery::kGoBackN;
  // NCCL_IB_TIMEOUT and NCCL_IB_RETRY_CNT semantics: each attempt waits 4.096 us * 2^t without
  // progress; after retry_count retries the QP fails. timeout_scale shrinks the wait for testbeds
  // whose RTTs are far shorter than a fabric's (1.0 keeps NCCL's real time).
  uint32_t timeout_exponent = 20;
  uint32_t retry_count = 7;
  double timeout_scale = 1.0;
  // Selective repeat: resend a hole at most once per this many ns, or per 1.5 measured RTTs if
  // that is longer (NAKs caused by packets already in flight must not resend it again).
  Nanos sack_retransmit_guard_ns = 20'000;
  // Out-of-order mode: when a hole is taken for lost rather than overtaken. A packet sent after
  // it being SACKed proves only that it was overtaken, since spraying over paths of different
  // delays reorders without losing; the hole is lost once such evidence is older than the
  // reorder window (RACK's reo_wnd: this, or a quarter of the measured RTT if longer), or once
  // reorder_packets later packets are SACKed (TCP's DupThresh, sized for spraying's displacement).
  Nanos reorder_window_ns = 20'000;
  uint32_t reorder_packets = 64;

  Nanos timeout_ns() const;
};

Status validate(const QpConfig& config);

const char* recovery_name(Recovery recovery);
Result<Recovery> parse_recovery(const std::string& name);

}  // namespace collide::replayer::transport
