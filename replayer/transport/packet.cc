#include "replayer/transport/packet.h"

namespace collide::replayer::transport {

uint32_t Packet::wire_bytes() const {
  constexpr uint32_t kBase = wire::kEthHeaderSize + wire::kIpv4HeaderSize +
                             wire::kUdpHeaderSize + wire::kBthSize + wire::kIcrcSize;
  switch (type) {
    case PacketType::kData:
      return kBase + (wire::opcode_has_reth(opcode) ? wire::kRethSize : 0) +
             ((payload_bytes + 3) & ~3u);
    case PacketType::kAck: return kBase + wire::kAethSize;
    case PacketType::kNak: return kBase + wire::kAethSize + 4;
    case PacketType::kCnp: return kBase + 16;
    case PacketType::kSack: return kBase + wire::kAethSize + 12;
  }
  return kBase;
}

}  // namespace collide::replayer::transport
