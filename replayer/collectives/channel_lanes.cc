#include "replayer/collectives/channel_lanes.h"

#include <limits>
#include <vector>

#include <fmt/format.h>

namespace collide::replayer::collectives {

Status keep_lane(ExpandedOp& op, uint32_t lane, uint32_t lanes, uint32_t nics_per_host) {
  if (lanes <= 1) return {};
  constexpr uint32_t kDropped = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> new_id(op.steps.size(), kDropped);
  uint32_t kept = 0;
  for (const Step& s : op.steps) {
    if (lane_of_channel(s.tag.channel, nics_per_host, lanes) == lane) new_id[s.id] = kept++;
  }
  std::vector<Step> out;
  out.reserve(kept);
  for (Step& s : op.steps) {
    if (new_id[s.id] == kDropped) continue;
    for (uint32_t& d : s.deps) {
      if (d >= new_id.size() || new_id[d] == kDropped) {
        return internal_error(fmt::format(
            "op {} of rank {}: step {} (channel {}) waits for step {} of another channel",
            op.op_index, op.rank, s.id, s.tag.channel, d));
      }
      d = new_id[d];
    }
    s.id = new_id[s.id];
    out.push_back(std::move(s));
  }
  op.steps = std::move(out);
  return {};
}

}  // namespace collide::replayer::collectives
