#include "replayer/engine/engine.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "common/logging.h"
#include "replayer/collectives/channel_lanes.h"
#include "replayer/engine/entropy_port.h"
#include "replayer/engine/flow_tag_codec.h"

namespace collide::replayer::engine {
namespace {

using transport::Nanos;
using transport::Packet;
using transport::PacketType;

// QP numbers: 1 (bit 23) | comm (9 bits) | channel (6) | QP index (8). The top bit keeps them off
// QP0 and QP1, which InfiniBand reserves for subnet and general management.
constexpr uint32_t kQpnBase = 1u << 23;
constexpr uint32_t kMaxComms = 512;
constexpr uint32_t kMaxChannels = 64;
constexpr uint32_t kMaxQpIndex = 256;
constexpr int kRxBurstsPerPoll = 4;

}  // namespace

Result<std::unique_ptr<Engine>> Engine::create(EngineConfig config, const v1::TraceHeader& header,
                                               collectives::Placement placement,
                                               collectives::ExpandOptions expand,
                                               std::map<uint32_t, std::vector<v1::Op>> programs,
                                               RankAddressing addressing,
                                               backend::PacketPort& port, Clock clock,
                                               LocalExchange* exchange, EngineLane lane) {
  COLLIDE_RETURN_IF_ERROR(transport::validate(config.qp));
  if (config.dcqcn.enabled) COLLIDE_RETURN_IF_ERROR(transport::validate(config.dcqcn));
  if (header.communicators_size() > static_cast<int>(kMaxComms)) {
    return invalid_argument(fmt::format("{} communicators; the engine handles at most {}",
                                        header.communicators_size(), kMaxComms));
  }
  if (expand.channels > kMaxChannels || expand.qps_per_connection > kMaxQpIndex) {
    return invalid_argument("too many channels or QPs per connection for the QP numbering");
  }
  std::unique_ptr<Engine> e(new Engine());
  e->config_ = config;
  auto expander = collectives::Expander::create(header, placement, expand);
  if (!expander.ok()) return expander.status();
  e->expander_ = std::make_unique<collectives::Expander>(std::move(expander).value());
  e->placement_ = std::move(placement);
  e->addressing_ = std::move(addressing);
  e->port_ = &port;
  e->clock_ = std::move(clock);
  e->exchange_ = exchange;
  if (lane.count == 0 || lane.index >= lane.count) {
    return invalid_argument(fmt::format("lane {} of {}", lane.index, lane.count));
  }
  e->lane_ = lane.index;
  e->lanes_ = lane.count;
  e->nics_per_host_ = std::max<uint32_t>(1, lane.nics_per_host);
  for (int i = 0; i < header.communicators_size(); ++i) {
    e->comm_index_[header.communicators(i).id()] = static_cast<uint32_t>(i);
  }
  for (uint32_t r = 0; r < e->placement_.world_size(); ++r) {
    const uint32_t ip = e->addressing_.ip_of(r).host_order;
    if (!e->rank_of_ip_.emplace(ip, r).second) {
      return invalid_argument(fmt::format("ranks {} and {} share the address {}",
                                          e->rank_of_ip_[ip], r, e->addressing_.ip_of(r).to_string()));
    }
  }
  for (auto& [rank, ops] : programs) {
    if (rank >= e->placement_.world_size()) {
      return invalid_argument(fmt::format("rank {} is outside the {}-rank job", rank,
                                          e->placement_.world_size()));
    }
    auto gate = lane.gates.find(rank);
    if (lane.count > 1 && gate == lane.gates.end()) {
      return invalid_argument(fmt::format("rank {} runs on {} lanes without a gate", rank, lane.count));
    }
    const RankLane rank_lane{lane.index, lane.count, std::max<uint32_t>(1, lane.nics_per_host),
                             lane.count > 1 ? gate->second : nullptr};
    e->runners_.emplace(rank, RankRunner(rank, std::move(ops), config.honor_compute_gaps, rank_lane));
    e->local_index_[rank] = static_cast<uint32_t>(e->local_ranks_.size());
    e->local_ranks_.push_back(rank);
    e->local_ips_.push_back(e->addressing_.ip_of(rank).host_order);
  }
  e->comm_count_ = static_cast<uint32_t>(header.communicators_size());
  e->channels_ = std::max<uint32_t>(1, expand.channels);
  e->qps_per_connection_ = std::max<uint32_t>(1, expand.qps_per_connection);
  e->by_slot_.resize(size_t{e->comm_count_} * e->local_ranks_.size());
  PacerConfig pacing;
  pacing.gbps = config.pace_gbps;
  pacing.burst_frames = config.pace_burst;
  // The largest frame: a data packet with a RETH and a full MTU of payload.
  pacing.frame_bytes = static_cast<uint32_t>(
      wire::kEthHeaderSize + wire::kIpv4HeaderSize + wire::kUdpHeaderSize + wire::kBthSize +
      wire::kRethSize + config.qp.mtu + wire::kIcrcSize);
  COLLIDE_RETURN_IF_ERROR(validate(pacing));
  if (config.burst == 0) return invalid_argument("burst must be at least one frame");
  e->pacer_ = Pacer(pacing, e->clock_());
  e->hooks_ = FaultHooks(config.drain_pauses, config.send_delays, config.nic);
  e->pfc_ = PfcPause(config.pfc);
  if (config.lossless.enabled) {
    COLLIDE_RETURN_IF_ERROR(validate(config.lossless));
    e->hold_capacity_ = kHoldPerXoff * config.lossless.xoff_frames;
  }
  if (config.drain_buffer_frames > 0) {
    COLLIDE_RETURN_IF_ERROR(validate_drain_buffer(config.drain_buffer_frames, config.lossless));
    e->hold_capacity_ = config.drain_buffer_frames;
    e->drop_when_held_full_ = true;
  }
  e->pfc_sender_ = PfcSender(config.lossless, config.pfc.line_gbps, port.mac());
  e->rx_frames_.resize(config.burst);
  return e;
}

Engine::~Engine() {
  // Held frames are the port's buffers.
  for (backend::Frame& f : held_) port_->release({&f, 1});
}

Result<uint32_t> Engine::qpn_for(const std::string& comm, uint16_t channel, uint16_t qp) const {
  auto it = comm_index_.find(comm);
  if (it == comm_index_.end()) return not_found("unknown communicator " + comm);
  return kQpnBase | (it->second << 14) | (uint32_t{channel} << 8) | qp;
}

uint32_t Engine::channel_of_qpn(uint32_t qpn) { return (qpn >> 8) & (kMaxChannels - 1); }

std::vector<Engine::Connection*>* Engine::slot_of(uint32_t local_index, uint32_t qpn) {
  if ((qpn & ~((kQpnBase << 1) - 1)) != 0 || (qpn & kQpnBase) == 0) return nullptr;
  const uint32_t comm = (qpn >> 14) & (kMaxComms - 1);
  const uint32_t channel = channel_of_qpn(qpn);
  const uint32_t qp = qpn & (kMaxQpIndex - 1);
  if (comm >= comm_count_ || channel >= channels_ || qp >= qps_per_connection_) return nullptr;
  auto& table = by_slot_[size_t{local_index} * comm_count_ + comm];
  if (table.empty()) table.resize(size_t{channels_} * qps_per_connection_);
  return &table[size_t{channel} * qps_per_connection_ + qp];
}

Engine::Connection& Engine::connection(uint32_t local, uint32_t peer, uint32_t qpn) {
  // Only ranks this engine runs make connections, and only with QP numbers from qpn_for.
  std::vector<Connection*>* slot = slot_of(local_index_.at(local), qpn);
  for (Connection* c : *slot) {
    if (c->peer == peer) return *c;
  }
  const ConnectionKey key{local, peer, qpn};
  auto at = std::lower_bound(connections_.begin(), connections_.end(), key,
                             [](const std::unique_ptr<Connection>& c, const ConnectionKey& k) {
                               return ConnectionKey{c->local, c->peer, c->qpn} < k;
                             });
  Connection& c = **connections_.insert(
      at, std::make_unique<Connection>(local, peer, qpn, config_.qp, config_.dcqcn.cnp_interval_ns));
  slot->push_back(&c);
  c.to_peer.src_mac = port_->mac();
  c.to_peer.dst_mac = addressing_.next_hop_mac(peer);
  c.to_peer.src_ip = addressing_.ip_of(local);
  c.to_peer.dst_ip = addressing_.ip_of(peer);
  c.to_peer.udp_src_port = entropy_port(local, peer, qpn, config_.entropy_seed);
  c.to_peer.dscp = config_.dscp;
  if (config_.steer_lanes) {
    c.to_peer.udp_src_port = steered_port(
        c.to_peer.udp_src_port, collectives::channel_turn(channel_of_qpn(qpn), nics_per_host_));
  }
  c.encoder.emplace(c.to_peer, qpn, config_.qp.mtu);
  if (config_.dcqcn.enabled) {
    c.dcqcn.emplace(config_.dcqcn, clock_());
    c.tokens_at = clock_();
  }
  return c;
}

bool Engine::rate_allows(Connection& c, Nanos now) const {
  if (!c.dcqcn) return true;
  c.dcqcn->on_time(now);
  // Up to two packets of burst: a rate-limited QP sends smoothly, as a NIC's shaper does.
  const double cap = 2.0 * (config_.qp.mtu + 128);
  c.rate_tokens = std::min(cap, c.rate_tokens + static_cast<double>(now - c.tokens_at) *
                                                    c.dcqcn->rate_gbps() / 8);
  c.tokens_at = now;
  return c.rate_tokens >= config_.qp.mtu;
}

Engine::Connection* Engine::connection_for_frame(uint32_t dst_ip, uint32_t src_ip,
                                                 uint32_t qpn) {
  // A host runs a few ranks (one per GPU): a scan of their addresses beats any map.
  const auto local = std::find(local_ips_.begin(), local_ips_.end(), dst_ip);
  if (local == local_ips_.end()) return nullptr;
  const auto local_index = static_cast<uint32_t>(local - local_ips_.begin());
  std::vector<Connection*>* slot = slot_of(local_index, qpn);
  if (slot == nullptr) return nullptr;
  for (Connection* c : *slot) {
    if (c->to_peer.dst_ip.host_order == src_ip) return c;
  }
  // The connection's first frame (its peer sent before this end did): who is the peer?
  auto src = rank_of_ip_.find(src_ip);
  if (src == rank_of_ip_.end()) return nullptr;
  return &connection(local_ranks_[local_index], src->second, qpn);
}

void Engine::arrive(const TransferKey& transfer, Nanos now) {
  auto it = waiting_receives_.find(transfer);
  if (it == waiting_receives_.end()) {
    arrived_.insert(transfer);
    return;
  }
  runners_.at(it->second.first).complete(it->second.second, now);
  waiting_receives_.erase(it);
}

void Engine::start_step(RankRunner& runner, const ReadyStep& ready, Nanos now) {
  const collectives::Step& step = *ready.step;
  auto qpn = qpn_for(*ready.comm, step.tag.channel, step.qp);
  auto tag = pack_flow_tag(step.tag);
  if (!qpn.ok() || !tag.ok()) {
    fail(fmt::format("rank {}: {}", runner.rank(),
                     (!qpn.ok() ? qpn.status() : tag.status()).message()),
         now);
    return;
  }
  const uint32_t rank = runner.rank();
  if (step.kind == collectives::StepKind::kRecv) {
    const TransferKey key{step.peer, rank, *qpn, *tag, step.tag.relay_to};
    if (arrived_.erase(key) > 0) {
      runner.complete(ready.ref, now);
    } else {
      waiting_receives_[key] = {rank, ready.ref};
    }
    return;
  }
  if (step.local) {
    const Nanos at = now + step.local_ns;
    const bool ours = exchange_ == nullptr || runners_.count(step.peer) > 0;
    local_.push({at, rank, ready.ref,
                 TransferKey{rank, step.peer, *qpn, *tag, step.tag.relay_to}, true, ours});
    if (!ours) {
      const LocalArrival a{at, rank, step.peer, *qpn, *tag, step.tag.relay_to};
      if (!handovers_.empty() || !exchange_->hand_over(a)) handovers_.push_back(a);
    }
    return;
  }
  Connection& c = connection(rank, step.peer, *qpn);
  c.requester.post(step.bytes, now, *tag);
  c.sends_by_tag[*tag] = ready.ref;
}

void Engine::start_ready_steps(Nanos now, bool& progress) {
  bool again = true;
  while (again && !failed()) {
    again = false;
    for (auto& [rank, runner] : runners_) {
      auto ready = runner.advance(now, *expander_);
      if (!ready.ok()) {
        fail(fmt::format("rank {}: {}", rank, ready.status().message()), now);
        return;
      }
      for (const ReadyStep& r : *ready) start_step(runner, r, now);
      // Receives that had already arrived complete at once and may make more steps ready.
      if (!ready->empty()) again = progress = true;
    }
  }
}

void Engine::handle_frame(const backend::Frame& frame, Nanos now) {
  ++counters_.rx_frames;
  if (wire::is_mac_control({frame.data, frame.len})) {
    // Flow control from the switch port we are cabled to: honoured as a NIC does.
    auto pause = wire::decode_pause({frame.data, frame.len});
    if (pause.ok()) {
      pfc_.on_frame(*pause, now);
    } else {
      ++counters_.rx_foreign;
    }
    return;
  }
  auto decoded = transport::decode_frame({frame.data, frame.len}, config_.verify_payload);
  if (!decoded.ok()) {
    ++counters_.rx_foreign;
    return;
  }
  if (!decoded->icrc_ok) {
    ++counters_.icrc_errors;  // a RoCE NIC drops such a packet; recovery resends it
    return;
  }
  Packet p = decoded->packet;
  if (lanes_ > 1 && (p.qpn & kQpnBase) != 0 &&
      collectives::lane_of_channel(channel_of_qpn(p.qpn), nics_per_host_, lanes_) != lane_) {
    ++counters_.rx_wrong_lane;  // its lane's engine never sees it: recovery resends it
    return;
  }
  Connection* found =
      connection_for_frame(decoded->dst_ip.host_order, decoded->src_ip.host_order, p.qpn);
  if (found == nullptr) {
    ++counters_.rx_foreign;
    return;
  }
  Connection& c = *found;
  const uint32_t local = c.local;
  const uint32_t peer = c.peer;
  if (p.type == PacketType::kData) {
    if (!decoded->pattern_ok) ++counters_.pattern_errors;
    p.psn = transport::unwrap_psn(static_cast<uint32_t>(p.psn), c.responder.expected_psn());
    for (const Packet& response : c.responder.on_packet(p, now)) {
      control_.push_back({response, c.to_peer});
    }
    for (const transport::MessageDelivery& d : c.responder.take_deliveries()) {
      arrive(TransferKey{peer, local, p.qpn, d.tag, 0}, now);
    }
    return;
  }
  const uint64_t reference = c.requester.acked_psn();
  p.psn = transport::unwrap_psn(static_cast<uint32_t>(p.psn), reference);
  // A selective ACK's bitmap always starts somewhere (its low 24 bits may well be 0).
  if (p.sack_psn != 0 || p.type == PacketType::kSack) {
    p.sack_psn = transport::unwrap_psn(static_cast<uint32_t>(p.sack_psn), reference);
  }
  c.requester.on_response(p, now);
  if (p.type == PacketType::kCnp && c.dcqcn) c.dcqcn->on_cnp(now);
  for (const transport::MessageCompletion& done : c.requester.take_completions()) {
    auto it = c.sends_by_tag.find(done.tag);
    if (it == c.sends_by_tag.end()) continue;
    runners_.at(local).complete(it->second, now);
    c.sends_by_tag.erase(it);
  }
}

void Engine::receive_frames(Nanos now, bool& progress) {
  if (!held_.empty()) {
    // What waited in the hold goes first and alone, so frames are handled in the order they came;
    // as much a poll as the port's bursts would take.
    for (size_t i = 0; i < kRxBurstsPerPoll * rx_frames_.size() && !held_.empty(); ++i) {
      handle_frame(held_.front(), now);
      port_->release({&held_.front(), 1});
      held_.pop_front();
    }
    progress = true;
    return;
  }
  std::vector<backend::Frame>& rx = rx_frames_;
  for (int i = 0; i < kRxBurstsPerPoll; ++i) {
    const uint16_t n = port_->receive(rx);
    for (uint16_t j = 0; j < n; ++j) handle_frame(rx[j], now);
    if (n > 0) {
      port_->release(std::span<backend::Frame>(rx.data(), n));
      progress = true;
    }
    if (n < rx.size()) break;
  }
}

void Engine::hold_frames(Nanos now, bool& progress) {
  std::vector<backend::Frame>& rx = rx_frames_;
  // With the NIC's buffer modelled, a full hold still empties the port (as many bursts as a poll
  // takes), dropping what it cannot keep: the NIC, not a ring behind it, decides what is lost.
  for (int burst = 0; held_.size() < hold_capacity_ || (drop_when_held_full_ && burst < kRxBurstsPerPoll);
       ++burst) {
    const size_t room = hold_capacity_ - held_.size();
    const size_t want = room > 0 ? std::min(rx.size(), room) : rx.size();
    const uint16_t n = port_->receive(std::span<backend::Frame>(rx).first(want));
    for (uint16_t j = 0; j < n; ++j) {
      if (wire::is_mac_control({rx[j].data, rx[j].len})) {
        handle_frame(rx[j], now);
        port_->release({&rx[j], 1});
      } else if (held_.size() < hold_capacity_) {
        held_.push_back(rx[j]);
        ++counters_.rx_held_frames;
      } else {
        port_->release({&rx[j], 1});
        ++counters_.rx_buffer_dropped;
      }
    }
    if (n > 0) progress = true;
    if (n < want) break;
  }
}

void Engine::send_flow_control(Nanos now, bool& progress) {
  const std::optional<wire::PauseFrame> due = pfc_sender_.due(held_.size(), now);
  if (!due) return;
  backend::Frame f{};
  if (!port_->acquire({&f, 1}).ok()) return;  // no buffer now: asked for again next poll
  auto len = wire::encode_pfc(*due, {f.data, f.capacity});
  if (!len.ok()) {
    port_->release({&f, 1});
    fail("encoding a PFC frame: " + len.status().message(), now);
    return;
  }
  f.len = static_cast<uint32_t>(*len);
  // Ahead of any data the port has not taken: a NIC's MAC sends flow control first, and a pause
  // is not itself held by the pause of RoCE's priority or by a send delay of its host.
  if (port_->submit({&f, 1}) == 1) {
    pfc_sender_.sent(*due, now);
    progress = true;
  } else {
    port_->release({&f, 1});
  }
}

void Engine::run_timers(Nanos now, bool& progress) {
  while (!local_.empty() && local_.top().at <= now) {
    const LocalDelivery d = local_.top();
    local_.pop();
    if (d.complete_send) runners_.at(d.sender).complete(d.send, now);
    if (d.deliver) arrive(d.transfer, now);
    progress = true;
  }
  for (auto& owned : connections_) {
    Connection& c = *owned;
    auto deadline = c.requester.timer_deadline();
    if (!deadline || *deadline > now) continue;
    c.requester.on_timer(now);
    progress = true;
    if (c.requester.failed()) {
      fail(fmt::format("NET/IB: rank {} got completion from rank {} ({}) with error 12 "
                       "(IBV_WC_RETRY_EXC_ERR) on QP {:#x}: {}",
                       c.local, c.peer, addressing_.ip_of(c.peer).to_string(), c.qpn,
                       c.requester.failure()),
           now);
      return;
    }
  }
}

void Engine::exchange_local(bool& progress) {
  if (exchange_ == nullptr) return;
  while (!handovers_.empty() && exchange_->hand_over(handovers_.front())) {
    handovers_.pop_front();
    progress = true;
  }
  arrivals_.clear();
  exchange_->take(arrivals_);
  for (const LocalArrival& a : arrivals_) {
    local_.push({a.at, a.sender, StepRef{},
                 TransferKey{a.sender, a.receiver, a.qpn, a.tag, a.relay_to}, false, true});
    progress = true;
  }
}

void Engine::hand_to_port(std::span<backend::Frame> frames, Nanos now) {
  const Nanos delay = hooks_.send_delay(now);
  if (delay == 0 && delayed_.empty()) {
    const uint16_t taken = port_->submit(frames);
    unsent_.assign(frames.begin() + taken, frames.end());
    return;
  }
  // Behind frames already held, so the line keeps the order they were built in.
  const Nanos due = std::max(now + delay, delayed_.empty() ? Nanos{0} : delayed_.back().first);
  for (backend::Frame& f : frames) delayed_.emplace_back(due, f);
  if (delay > 0) counters_.tx_delayed_frames += frames.size();
}

void Engine::transmit(Nanos now, bool& progress) {
  // Paused by PFC: nothing of RoCE's priority leaves, as a NIC's paused transmit queue holds.
  if (pfc_.holds(now)) return;
  // Held frames whose delay is over queue for the port behind anything it has not taken yet.
  while (!delayed_.empty() && delayed_.front().first <= now) {
    unsent_.push_back(delayed_.front().second);
    delayed_.pop_front();
  }
  if (!unsent_.empty()) {
    const uint16_t taken = port_->submit(unsent_);
    unsent_.erase(unsent_.begin(), unsent_.begin() + taken);
    if (taken > 0) progress = true;
    if (!unsent_.empty()) return;  // the port is full; try again next poll
  }
  pacer_.advance(now);
  if (!pacer_.may_send()) return;
  if (control_.empty() && !any_ready_to_send()) return;
  std::vector<backend::Frame>& frames = tx_frames_;
  frames.assign(config_.burst, backend::Frame{});
  if (!port_->acquire(frames).ok()) return;
  size_t used = 0;
  // Data goes through its connection's encoder; control frames through the general encoder.
  auto emit = [&](const Packet& p, const transport::FrameAddress& a,
                  const transport::QpFrameEncoder* encoder) {
    backend::Frame& f = frames[used];
    transport::PayloadMemo memo{f.payload_held};
    auto len = encoder != nullptr
                   ? encoder->encode({f.data, f.capacity}, p, config_.verify_payload, &memo)
                   : transport::encode_frame({f.data, f.capacity}, p, a, config_.verify_payload,
                                             &memo);
    f.payload_written = memo.written;
    if (!len.ok()) {
      fail("encoding a frame: " + len.status().message(), now);
      return;
    }
    f.len = static_cast<uint32_t>(*len);
    counters_.tx_bytes += f.len;
    pacer_.on_sent(f.len);
    ++used;
  };
  // Control frames (ACKs, NAKs, CNPs) first, and within the line rate like everything else.
  while (used < frames.size() && !control_.empty() && !failed() && pacer_.may_send()) {
    emit(control_.front().packet, control_.front().address, nullptr);
    control_.pop_front();
  }
  // Data: every ready connection gets an equal share of what is left of the burst per round, so
  // QPs share the port fairly. A share is built in one go (a QP's packets back to back, as a
  // NIC's QP scheduler sends them): the requester then walks its messages once per share, not
  // once per packet. A DCQCN-limited QP takes one packet at a time, as its rate allows.
  bool sent_in_round = true;
  while (used < frames.size() && sent_in_round && !failed()) {
    sent_in_round = false;
    size_t ready = 0;
    for (const auto& c : connections_) ready += c->requester.ready_to_send() ? 1 : 0;
    if (ready == 0) break;
    const size_t share = std::max<size_t>(1, (frames.size() - used) / ready);
    for (auto& owned : connections_) {
      Connection& c = *owned;
      if (used >= frames.size() || failed()) break;
      if (!c.requester.ready_to_send() || !rate_allows(c, now)) continue;
      if (!pacer_.may_send()) break;
      const size_t want =
          c.dcqcn ? 1 : std::min({share, frames.size() - used, pacer_.frames_allowed()});
      tx_packets_.resize(std::max(tx_packets_.size(), want));
      const size_t n = c.requester.next_packets(now, std::span<Packet>(tx_packets_).first(want));
      for (size_t i = 0; i < n && !failed(); ++i) {
        const Packet& p = tx_packets_[i];
        emit(p, c.to_peer, &*c.encoder);
        if (c.dcqcn) {
          c.rate_tokens -= p.wire_bytes();
          c.dcqcn->on_bytes_sent(p.wire_bytes(), now);
        }
      }
      sent_in_round = sent_in_round || n > 0;
    }
  }
  if (used < frames.size()) {
    port_->release(std::span<backend::Frame>(frames).subspan(used));
  }
  if (used == 0) return;
  progress = true;
  counters_.tx_frames += used;
  hand_to_port(std::span<backend::Frame>(frames.data(), used), now);
}

bool Engine::poll() {
  if (failed()) return false;
  const Nanos now = clock_();
  hooks_.start(now);
  hooks_.observe(now);
  bool progress = false;
  const bool paused = hooks_.draining_paused(now);
  if (paused) ++counters_.rx_paused_polls;
  if (!paused) {
    receive_frames(now, progress);
  } else if (hold_capacity_ > 0) {
    hold_frames(now, progress);
  }
  send_flow_control(now, progress);
  exchange_local(progress);
  run_timers(now, progress);
  start_ready_steps(now, progress);
  transmit(now, progress);
  for (auto& [rank, runner] : runners_) {
    for (OpRecord& r : runner.take_records()) records_.push_back(std::move(r));
  }
  return progress;
}

std::optional<Nanos> Engine::next_deadline() const {
  std::optional<Nanos> next;
  auto consider = [&](std::optional<Nanos> t) {
    if (t && (!next || *t < *next)) next = t;
  };
  if (!local_.empty()) consider(local_.top().at);
  if (!handovers_.empty()) consider(clock_());
  if (!delayed_.empty()) consider(delayed_.front().first);
  consider(pfc_.until());
  consider(pfc_sender_.refresh_at());
  if (!hooks_.empty()) consider(hooks_.next_change(clock_()));
  for (const auto& [rank, runner] : runners_) consider(runner.wake_at());
  for (const auto& c : connections_) {
    consider(c->requester.timer_deadline());
    if (c->requester.ready_to_send() && c->dcqcn) {
      const double missing = std::max(0.0, config_.qp.mtu - c->rate_tokens);
      consider(c->tokens_at + static_cast<Nanos>(missing * 8 / c->dcqcn->rate_gbps()) + 1);
    }
  }
  // Frames are waiting for the pacer: due when it lets a few go (Pacer::wake_time).
  if (pacer_.enabled() && !pacer_.may_send() && (!control_.empty() || any_ready_to_send())) {
    consider(pacer_.wake_time() + 1);
  }
  return next;
}

bool Engine::any_ready_to_send() const {
  for (const auto& c : connections_) {
    if (c->requester.ready_to_send()) return true;
  }
  return false;
}

bool Engine::finished() const {
  if (failed()) return true;
  for (const auto& [rank, runner] : runners_) {
    if (!runner.finished()) return false;
  }
  return control_.empty() && unsent_.empty() && delayed_.empty() && handovers_.empty();
}

Status Engine::run(std::chrono::nanoseconds timeout, const std::atomic<bool>* stop) {
  const Nanos deadline = clock_() + static_cast<Nanos>(timeout.count());
  while (!finished()) {
    const bool progress = poll();
    if (failed()) break;
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      return unavailable("stopped before the replay finished");
    }
    const Nanos now = clock_();
    if (now >= deadline) return deadline_exceeded("replay did not finish in time");
    if (progress || (exchange_ != nullptr && exchange_->has_arrivals())) continue;
    auto wait = config_.max_idle_wait;
    if (auto next = next_deadline(); next && *next > now) {
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::nanoseconds(*next - now)));
    } else if (next) {
      continue;
    }
    if (hooks_.draining_paused(now) && held_.size() >= hold_capacity_ && !drop_when_held_full_) {
      // Frames are waiting and must stay waiting (or the hold is full): the port would wake at
      // once, so sleep instead.
      std::this_thread::sleep_for(wait);
    } else {
      port_->wait_for_frames(wait);
    }
  }
  if (failed()) return unavailable(failure_);
  return {};
}

void Engine::fail(const std::string& why, Nanos now) {
  if (failed()) return;
  failure_ = why;
  logging::get("replayer")->error("{}", why);
  for (auto& [rank, runner] : runners_) {
    runner.fail(why, now);
    for (OpRecord& r : runner.take_records()) records_.push_back(std::move(r));
  }
}

std::vector<OpRecord> Engine::take_records() {
  std::vector<OpRecord> out;
  out.swap(records_);
  return out;
}

EngineCounters Engine::counters() const {
  EngineCounters total = counters_;
  total.pause_frames = pfc_.counters().pause_frames;
  total.paused_ns = pfc_.counters().paused_ns;
  total.pause_frames_sent =
      pfc_sender_.counters().pauses_sent + pfc_sender_.counters().resumes_sent;
  for (const auto& c : connections_) {
    total.requesters += c->requester.counters();
    total.responders += c->responder.counters();
  }
  return total;
}

std::vector<QpCounters> Engine::qp_counters() const {
  std::vector<QpCounters> out;
  for (const auto& c : connections_) {
    out.push_back({c->local, c->peer, c->qpn, c->requester.counters(), c->responder.counters()});
  }
  return out;
}

}  // namespace collide::replayer::engine
