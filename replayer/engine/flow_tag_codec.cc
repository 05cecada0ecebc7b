#include "replayer/engine/flow_tag_codec.h"

#include <fmt/format.h>

namespace collide::replayer::engine {
namespace {

constexpr int kSliceBits = 18;
constexpr int kStepBits = 18;
constexpr int kSeqBits = 27;

constexpr uint64_t mask(int bits) { return (uint64_t{1} << bits) - 1; }

}  // namespace

Result<uint64_t> pack_flow_tag(const collectives::FlowTag& tag) {
  if (tag.op_seq > mask(kSeqBits) || tag.step > mask(kStepBits) || tag.slice > mask(kSliceBits)) {
    return invalid_argument(fmt::format(
        "transfer (op {} step {} slice {}) exceeds what a message tag holds (2^{} ops, 2^{} steps, "
        "2^{} slices): use larger slices",
        tag.op_seq, tag.step, tag.slice, kSeqBits, kStepBits, kSliceBits));
  }
  return (uint64_t{tag.point_to_point} << 63) | (tag.op_seq << (kStepBits + kSliceBits)) |
         (uint64_t{tag.step} << kSliceBits) | tag.slice;
}

collectives::FlowTag unpack_flow_tag(uint64_t packed, uint16_t channel) {
  collectives::FlowTag tag;
  tag.point_to_point = (packed >> 63) != 0;
  tag.op_seq = (packed >> (kStepBits + kSliceBits)) & mask(kSeqBits);
  tag.step = static_cast<uint32_t>((packed >> kSliceBits) & mask(kStepBits));
  tag.slice = static_cast<uint32_t>(packed & mask(kSliceBits));
  tag.channel = channel;
  return tag;
}

}  // namespace collide::replayer::engine
