#include "replayer/engine/flow_tag_codec.h"

#include <fmt/format.h>

namespace collide::replayer::engine {
namespace {

constexpr int kSliceBits = 15;
constexpr int kStepBits = 15;
constexpr int kSeqBits = 25;
constexpr int kRelayBits = 8;
constexpr int kStepShift = kSliceBits;
constexpr int kSeqShift = kStepShift + kStepBits;
constexpr int kRelayShift = kSeqShift + kSeqBits;
static_assert(kRelayShift + kRelayBits == 63, "the top bit is the point-to-point flag");

constexpr uint64_t mask(int bits) { return (uint64_t{1} << bits) - 1; }

}  // namespace

Result<uint64_t> pack_flow_tag(const collectives::FlowTag& tag) {
  if (tag.op_seq > mask(kSeqBits) || tag.step > mask(kStepBits) || tag.slice > mask(kSliceBits)) {
    return invalid_argument(fmt::format(
        "transfer (op {} step {} slice {}) exceeds what a message tag holds (2^{} ops, 2^{} steps, "
        "2^{} slices): use larger slices",
        tag.op_seq, tag.step, tag.slice, kSeqBits, kStepBits, kSliceBits));
  }
  if (tag.relay_from > mask(kRelayBits)) {
    return invalid_argument(fmt::format(
        "a PXN-relayed transfer's origin is rank {} of its host; a message tag names at most {} "
        "ranks per host (turn PXN off for such hosts)",
        tag.relay_from - 1, mask(kRelayBits)));
  }
  return (uint64_t{tag.point_to_point} << 63) | (uint64_t{tag.relay_from} << kRelayShift) |
         (tag.op_seq << kSeqShift) | (uint64_t{tag.step} << kStepShift) | tag.slice;
}

collectives::FlowTag unpack_flow_tag(uint64_t packed, uint16_t channel) {
  collectives::FlowTag tag;
  tag.point_to_point = (packed >> 63) != 0;
  tag.relay_from = static_cast<uint32_t>((packed >> kRelayShift) & mask(kRelayBits));
  tag.op_seq = (packed >> kSeqShift) & mask(kSeqBits);
  tag.step = static_cast<uint32_t>((packed >> kStepShift) & mask(kStepBits));
  tag.slice = static_cast<uint32_t>(packed & mask(kSliceBits));
  tag.channel = channel;
  return tag;
}

}  // namespace collide::replayer::engine
