#include "replayer/collectives/expander.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "replayer/collectives/algorithms.h"
#include "replayer/collectives/ring_order.h"
#include "replayer/collectives/step_builder.h"
#include "traces/op_types.h"

namespace collide::replayer::collectives {
namespace {

constexpr uint32_t kMaxChannels = 64;
constexpr uint32_t kMaxQps = 256;

Result<uint32_t> position_of(const std::vector<uint32_t>& order, uint32_t rank,
                             const std::string& comm) {
  auto it = std::find(order.begin(), order.end(), rank);
  if (it == order.end()) {
    return invalid_argument(fmt::format("rank {} is not a member of communicator {}", rank, comm));
  }
  return static_cast<uint32_t>(it - order.begin());
}

}  // namespace

Status validate(const ExpandOptions& o) {
  if (o.channels == 0 || o.channels > kMaxChannels) {
    return invalid_argument(
        fmt::format("channels must be 1..{} (got {})", kMaxChannels, o.channels));
  }
  if (o.slice_bytes == 0) return invalid_argument("slice_bytes must be positive");
  if (!(o.local_gbytes_per_s > 0)) return invalid_argument("local bandwidth must be positive");
  if (o.qps_per_connection == 0 || o.qps_per_connection > kMaxQps) {
    return invalid_argument(
        fmt::format("qps_per_connection must be 1..{} (got {})", kMaxQps, o.qps_per_connection));
  }
  return {};
}

Result<Expander> Expander::create(const v1::TraceHeader& header, Placement placement,
                                  ExpandOptions options) {
  COLLIDE_RETURN_IF_ERROR(validate(options));
  Expander e;
  e.placement_ = std::move(placement);
  e.options_ = options;
  *e.sources_.mutable_source_files() = header.source_files();
  for (const v1::Communicator& comm : header.communicators()) {
    if (comm.ranks_size() == 0) {
      return invalid_argument(fmt::format("communicator {} has no ranks", comm.id()));
    }
    for (uint32_t r : comm.ranks()) {
      if (r >= e.placement_.world_size()) {
        return invalid_argument(
            fmt::format("communicator {} has rank {} but the placement covers {} ranks", comm.id(),
                        r, e.placement_.world_size()));
      }
    }
    const uint32_t first_host = e.placement_.host_of_rank[comm.ranks(0)];
    e.host_local_[comm.id()] =
        std::all_of(comm.ranks().begin(), comm.ranks().end(),
                    [&](uint32_t r) { return e.placement_.host_of_rank[r] == first_host; });
    if (!e.comms_.emplace(comm.id(), comm).second) {
      return invalid_argument(fmt::format("communicator {} is defined twice", comm.id()));
    }
  }
  return e;
}

Result<const std::vector<uint32_t>*> Expander::order_of(const v1::Communicator& comm,
                                                        uint32_t channel) {
  // Orders repeat with the trace's ring count; without rings each channel enters the hosts on
  // its own rail (ring_order), a few orders per communicator.
  const uint32_t key_channel = comm.rings_size() > 0 ? channel % comm.rings_size() : channel;
  auto key = std::make_pair(comm.id(), key_channel);
  auto it = orders_.find(key);
  if (it == orders_.end()) {
    auto order = ring_order(comm, placement_, key_channel, options_.ring_order);
    if (!order.ok()) return order.status();
    it = orders_.emplace(std::move(key), std::move(order).value()).first;
  }
  return &it->second;
}

uint64_t Expander::next_sequence(const v1::Op& op, uint32_t peer) {
  if (traces::is_point_to_point(op.kind())) {
    const int direction = op.kind() == v1::OP_KIND_SEND ? 0 : 1;
    return p2p_seq_[{op.rank(), op.comm(), peer, direction}]++;
  }
  return collective_seq_[{op.rank(), op.comm()}]++;
}

Result<ExpandedOp> Expander::expand(const v1::Op& op) {
  auto comm_it = comms_.find(op.comm());
  if (comm_it == comms_.end()) {
    return invalid_argument(fmt::format("{}: op {} of rank {} names unknown communicator '{}'",
                                        traces::op_source(sources_, op), op.index(), op.rank(),
                                        op.comm()));
  }
  const v1::Communicator& comm = comm_it->second;
  const auto n = static_cast<uint32_t>(comm.ranks_size());
  const bool p2p = traces::is_point_to_point(op.kind());
  const bool rooted = op.kind() == v1::OP_KIND_BROADCAST || op.kind() == v1::OP_KIND_REDUCE ||
                      op.kind() == v1::OP_KIND_GATHER || op.kind() == v1::OP_KIND_SCATTER;
  if ((p2p || rooted) && (op.root() < 0 || static_cast<uint32_t>(op.root()) >= n)) {
    return invalid_argument(
        fmt::format("{}: {} of rank {} has root/peer {} outside its {}-rank "
                    "communicator {}",
                    traces::op_source(sources_, op), traces::op_kind_name(op.kind()), op.rank(),
                    op.root(), n, comm.id()));
  }
  const uint32_t peer = p2p ? comm.ranks(op.root()) : 0;

  ExpandedOp out;
  out.rank = op.rank();
  out.op_index = op.index();
  out.comm = op.comm();
  const uint64_t seq = next_sequence(op, peer);
  // Pipelining slices only shape how a transfer crosses the network; a host-local communicator's
  // modeled transfers take the same time whole, and a whole transfer is one step, not hundreds.
  const uint64_t slice_bytes =
      host_local_[op.comm()] ? std::numeric_limits<uint64_t>::max() : options_.slice_bytes;
  StepBuilder builder(out, placement_, slice_bytes, options_.qps_per_connection);

  // PXN relays collectives whose sizes every member knows (not all-to-allv) and that leave
  // the host; every end of a transfer decides the same way from the same header and placement.
  const bool relayed = options_.pxn && !p2p && !host_local_[op.comm()] &&
                       op.kind() != v1::OP_KIND_ALL_TO_ALLV;
  for (uint32_t c = 0; c < options_.channels; ++c) {
    auto order_or = order_of(comm, c);
    if (!order_or.ok()) return order_or.status();
    const std::vector<uint32_t>* order = *order_or;
    auto pos = position_of(*order, op.rank(), comm.id());
    if (!pos.ok()) return pos.status();
    const ChannelView view{*order, *pos, seq, static_cast<uint16_t>(c), p2p};
    if (op.bytes() == 0 && op.kind() != v1::OP_KIND_BARRIER &&
        op.kind() != v1::OP_KIND_ALL_TO_ALLV) {
      break;  // NCCL returns at once for empty buffers
    }
    const auto first = static_cast<uint32_t>(out.steps.size());
    COLLIDE_RETURN_IF_ERROR(append_channel(builder, op, comm, view));
    if (relayed) COLLIDE_RETURN_IF_ERROR(relay_channel(builder, out, op, comm, view, first));
  }
  for (Step& s : out.steps) {
    if (s.local) {
      s.local_ns =
          static_cast<uint64_t>(static_cast<double>(s.bytes) / options_.local_gbytes_per_s);
    }
  }
  return out;
}

Status Expander::append_channel(StepBuilder& builder, const v1::Op& op,
                                const v1::Communicator& comm, const ChannelView& view) {
  const auto n = static_cast<uint32_t>(comm.ranks_size());
  const uint32_t c = view.channel;
  const uint64_t share = share_of(op.bytes(), options_.channels, c);
  auto root_pos = [&]() -> uint32_t {
    return *position_of(view.order, comm.ranks(op.root()), comm.id());
  };
  switch (op.kind()) {
    case v1::OP_KIND_ALL_REDUCE:
      if (options_.all_reduce == AllReduceAlgorithm::kTree) {
        tree_all_reduce(builder, view, static_cast<int>(c % 2), share);
      } else {
        ring_all_reduce(builder, view, share);
      }
      break;
    case v1::OP_KIND_ALL_GATHER:
      ring_all_gather(builder, view, share);
      break;
    case v1::OP_KIND_REDUCE_SCATTER:
      ring_reduce_scatter(builder, view, share);
      break;
    case v1::OP_KIND_BARRIER:
      // A barrier is a one-byte all-gather on one channel: done once every rank was heard.
      if (c == 0) ring_all_gather(builder, view, 1);
      break;
    case v1::OP_KIND_BROADCAST:
      chain_broadcast(builder, view, root_pos(), share);
      break;
    case v1::OP_KIND_REDUCE:
      chain_reduce(builder, view, root_pos(), share);
      break;
    case v1::OP_KIND_GATHER:
      direct_gather(builder, view, root_pos(), share);
      break;
    case v1::OP_KIND_SCATTER:
      direct_scatter(builder, view, root_pos(), share);
      break;
    case v1::OP_KIND_ALL_TO_ALL: {
      std::vector<uint64_t> each(n, share);
      pairwise_all_to_all(builder, view, each, each);
      break;
    }
    case v1::OP_KIND_ALL_TO_ALLV: {
      if (op.peer_bytes_size() != static_cast<int>(n)) {
        return invalid_argument(fmt::format(
            "{}: all_to_allv of rank {} lists {} peer sizes for a {}-rank communicator",
            traces::op_source(sources_, op), op.rank(), op.peer_bytes_size(), n));
      }
      // peer_bytes is indexed by comm rank; the view by position in this channel's order.
      std::vector<uint64_t> to_pos(n);
      for (uint32_t q = 0; q < n; ++q) {
        const auto comm_rank = static_cast<int>(
            std::find(comm.ranks().begin(), comm.ranks().end(), view.order[q]) -
            comm.ranks().begin());
        to_pos[q] = share_of(op.peer_bytes(comm_rank), options_.channels, c);
      }
      pairwise_all_to_all(builder, view, to_pos, {});
      break;
    }
    case v1::OP_KIND_SEND:
      point_to_point(builder, view, StepKind::kSend, comm.ranks(op.root()), share);
      break;
    case v1::OP_KIND_RECV:
      point_to_point(builder, view, StepKind::kRecv, comm.ranks(op.root()), share);
      break;
    default:
      return invalid_argument(fmt::format("{}: op {} of rank {} has no kind",
                                          traces::op_source(sources_, op), op.index(),
                                          op.rank()));
  }
  return {};
}

const PxnRelays& Expander::relays_of(const v1::Communicator& comm) {
  auto it = relays_.find(comm.id());
  if (it == relays_.end()) it = relays_.emplace(comm.id(), PxnRelays(comm, placement_)).first;
  return it->second;
}

Status Expander::relay_channel(StepBuilder& builder, ExpandedOp& out, const v1::Op& op,
                               const v1::Communicator& comm, const ChannelView& view,
                               uint32_t first) {
  const PxnRelays& relays = relays_of(comm);
  if (index_on_host_.empty()) index_on_host_ = index_on_host(placement_);
  const uint32_t me = op.rank();
  // This rank's own transfers with other rails: sends go over NVLink to the relay, which keeps
  // them apart from its own by their receiver; receives come from the relay, apart from its own
  // by their origin.
  for (uint32_t i = first; i < out.steps.size(); ++i) {
    Step& s = out.steps[i];
    if (s.local) continue;
    const bool send = s.kind == StepKind::kSend;
    const int64_t relay = relays.relay_of(placement_, send ? me : s.peer, send ? s.peer : me);
    if (relay == PxnRelays::kDirect) continue;
    if (send) {
      s.tag.relay_to = s.peer + 1;
      s.local = true;
    } else {
      s.tag.relay_from = index_on_host_[s.peer] + 1;
    }
    s.peer = static_cast<uint32_t>(relay);
  }
  // The transfers of host-mates on other rails that this rank carries on: each mate's channel is
  // expanded again keeping only those sends (its other transfers are not even cut into slices).
  for (uint32_t mate : relays.members_on(placement_.host_of_rank[me])) {
    if (placement_.nic_of_rank[mate] == placement_.nic_of_rank[me]) continue;
    auto pos = position_of(view.order, mate, comm.id());
    if (!pos.ok()) return pos.status();
    probe_.rank = mate;
    probe_.steps.clear();
    StepBuilder probe = builder.for_op(probe_);
    probe.keep_only_relayed_by(me, relays);
    const ChannelView mate_view{view.order, *pos, view.op_seq, view.channel, view.point_to_point};
    COLLIDE_RETURN_IF_ERROR(append_channel(probe, op, comm, mate_view));
    for (const Step& s : probe_.steps) {
      FlowTag in = s.tag;
      in.relay_to = s.peer + 1;
      const uint32_t arrived = builder.add(StepKind::kRecv, mate, s.bytes, in);
      FlowTag onward = s.tag;
      onward.relay_from = index_on_host_[mate] + 1;
      builder.add(StepKind::kSend, s.peer, s.bytes, onward, StepDeps{arrived});
    }
  }
  return {};
}

}  // namespace collide::replayer::collectives
