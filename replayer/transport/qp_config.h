#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "replayer/transport/packet.h"

namespace collide::replayer::transport {

enum class Recovery {
  kGoBackN,          // what RoCE NICs do: a gap makes the sender resend everything from it
  kSelectiveRepeat,  // IRN-like: the receiver keeps out-of-order packets, the sender resends holes
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

  Nanos timeout_ns() const;
};

Status validate(const QpConfig& config);

const char* recovery_name(Recovery recovery);
Result<Recovery> parse_recovery(const std::string& name);

}  // namespace collide::replayer::transport
