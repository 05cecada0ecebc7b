#pragma once

#include <cstdint>
#include <vector>

#include "replayer/transport/packet.h"

namespace collide::replayer::engine {

// A step between two ranks of one host whose ranks run on different engines (one per NIC): the
// sender's engine hands the receiver's engine the transfer and when it arrives (the modeled
// NVLink time), and the receiver's engine completes the receive then.
struct LocalArrival {
  transport::Nanos at = 0;
  uint32_t sender = 0;
  uint32_t receiver = 0;
  uint32_t qpn = 0;
  uint64_t tag = 0;  // the packed flow tag
  uint32_t relay_to = 0;  // FlowTag::relay_to: set on an NVLink hop to a PXN relay
};

// One engine's end of the channels to the other engines of its host. Called only from the thread
// that runs the engine.
class LocalExchange {
 public:
  virtual ~LocalExchange() = default;
  // Hands the arrival to the engine that runs `a.receiver`; false if that channel is full now.
  virtual bool hand_over(const LocalArrival& a) = 0;
  // Appends the arrivals handed to this engine since the last call.
  virtual void take(std::vector<LocalArrival>& out) = 0;
  virtual bool has_arrivals() const = 0;
};

}  // namespace collide::replayer::engine
