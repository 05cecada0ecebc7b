#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "replayer/transport/in_memory_link.h"
#include "replayer/transport/qp_config.h"
#include "replayer/transport/requester.h"
#include "replayer/transport/responder.h"

namespace collide::replayer::transport {

struct TransferResult {
  bool completed = false;
  std::string failure;              // the requester's reason when the QP failed
  Nanos elapsed_ns = 0;             // until the last message was acknowledged (or the end)
  uint64_t bytes = 0;               // message bytes acknowledged
  uint64_t data_packets_dropped = 0;
  uint64_t acks_dropped = 0;
  RequesterCounters requester;
  ResponderCounters responder;
  std::vector<MessageCompletion> completions;

  double goodput_gbps() const;
};

// Moves `messages` over one queue pair across two in-memory links (data one way, ACKs the other)
// on a virtual clock, until every message is acknowledged, the QP fails, or `time_limit_ns`.
TransferResult run_loopback_transfer(const QpConfig& qp, const LinkConfig& data_link,
                                     const LinkConfig& ack_link,
                                     const std::vector<uint64_t>& messages, Nanos time_limit_ns);

}  // namespace collide::replayer::transport
