#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "replayer/backend/packet_port.h"
#include "replayer/collectives/expander.h"
#include "replayer/engine/fault_hooks.h"
#include "replayer/engine/lane_gate.h"
#include "replayer/engine/local_exchange.h"
#include "replayer/engine/op_record.h"
#include "replayer/engine/pacer.h"
#include "replayer/engine/pfc_pause.h"
#include "replayer/engine/pfc_sender.h"
#include "replayer/engine/rank_runner.h"
#include "replayer/transport/dcqcn.h"
#include "replayer/transport/frame_codec.h"
#include "replayer/transport/requester.h"
#include "replayer/transport/responder.h"

namespace collide::replayer::engine {

struct EngineConfig {
  transport::QpConfig qp;
  transport::DcqcnConfig dcqcn;      // per-QP rate control on CNPs (off unless enabled)
  bool verify_payload = true;        // fill payloads with the pattern and check what arrives
  uint8_t dscp = 0;                  // of every RoCE frame sent: its switch priority is dscp / 8
  bool honor_compute_gaps = false;   // wait Op.compute_before_ns between ops (trace timing)
  double pace_gbps = 0;              // the port's line rate; 0: as fast as the port takes frames
  uint32_t pace_burst = 32;          // frames that may leave back to back at the line rate
  uint32_t burst = 32;               // frames per submit
  std::chrono::microseconds max_idle_wait{500};
  uint64_t entropy_seed = 0;         // moves every QP's UDP source port (entropy_port.h)
  // The QPs' UDP source ports carry their channel's turn on its NIC (entropy_port.h:
  // steered_port), so a NIC of several queues steers each QP's frames to the queue of its lane by
  // a flow rule. Set on every host of a run in which any NIC has several queues.
  bool steer_lanes = false;
  // Slow receiver and slow sender (fault_hooks.h), counted from the first poll; windows aimed at
  // a NIC act only on the engines of `nic`, the NIC this engine drives.
  std::vector<DrainPause> drain_pauses;
  std::vector<SendDelay> send_delays;
  uint32_t nic = 0;
  // Priority flow control from the switch port: which priority RoCE rides, and the link speed
  // that makes a pause quantum's length.
  PfcConfig pfc;
  // Lossless receive (pfc_sender.h): during a drain pause the engine still takes frames from its
  // port, into a bounded hold that plays the NIC's receive buffer, and pauses its leaf port while
  // they back up. Off: a drain pause leaves the port alone and what overflows its ring is lost.
  LosslessConfig lossless;
  // The NIC's own receive buffer, in frames, for a drain pause: the engine takes what arrives
  // into a hold of this size and drops what arrives with it full, counting each frame
  // (rx_buffer_dropped), as a NIC whose host stopped draining it does; lossless, it pauses its leaf
  // port at lossless.xoff_frames within it. 0: lossless, a hold of kHoldPerXoff x xoff_frames
  // that never drops (the port's ring waits behind it); lossy, frames wait in the port's ring,
  // whose overflow the port's driver may not count.
  uint32_t drain_buffer_frames = 0;
};

// How ranks are reached: each rank has its own IPv4 address (several ranks may share a NIC), and
// frames for a rank go to the MAC of its NIC or of the next hop towards it.
struct RankAddressing {
  std::function<wire::Ipv4Address(uint32_t rank)> ip_of;
  std::function<wire::MacAddress(uint32_t rank)> next_hop_mac;
};

// Which lane of its NIC an engine is when the NIC's queues each have an engine (lane_gate.h),
// and the gates of the ranks it runs, by rank (none with one lane).
struct EngineLane {
  uint32_t index = 0;
  uint32_t count = 1;
  uint32_t nics_per_host = 1;  // the job's: which lane a channel falls in (lane_of_channel)
  std::map<uint32_t, LaneGate*> gates;
};

struct EngineCounters {
  uint64_t rx_frames = 0;
  uint64_t rx_foreign = 0;      // not RoCEv2 or not for our ranks
  uint64_t rx_wrong_lane = 0;   // for a QP of another lane of this NIC: its queue was not steered
  uint64_t icrc_errors = 0;     // dropped, as a NIC would
  uint64_t pattern_errors = 0;  // payload differed from what its QP and PSN must carry
  uint64_t tx_frames = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_paused_polls = 0;    // polls that left the receive ring alone (drain pause)
  uint64_t tx_delayed_frames = 0;  // frames held back by a send delay
  uint64_t pause_frames = 0;       // PFC (or 802.3x) frames received that paused RoCE's priority
  uint64_t paused_ns = 0;          // time sending was held by them
  uint64_t pause_frames_sent = 0;  // lossless: pause and resume frames sent to the leaf port
  uint64_t rx_held_frames = 0;     // frames taken into the hold during a drain pause
  uint64_t rx_buffer_dropped = 0;  // dropped in a drain pause with the hold (drain_buffer_frames) full
  transport::RequesterCounters requesters;  // summed over QPs
  transport::ResponderCounters responders;
};

struct QpCounters {
  uint32_t rank = 0;       // the local end
  uint32_t peer = 0;
  uint32_t qpn = 0;
  transport::RequesterCounters requester;
  transport::ResponderCounters responder;
};

// Runs the expanded programs of the ranks one host holds over one packet port: starts each step
// when its dependencies are met, carries network transfers over reliable connected QPs (one per
// peer, communicator, channel and QP index, as NCCL connects), completes steps between ranks of
// this host after their modeled NVLink time, and records when every op started and ended.
// Single-threaded: call poll() (or run()) from one thread. When a host's ranks are split over
// engines (one per NIC, HostEngines), steps to a rank of another engine go through `exchange`.
class Engine {
 public:
  using Clock = std::function<transport::Nanos()>;

  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  static Result<std::unique_ptr<Engine>> create(EngineConfig config,
                                                const v1::TraceHeader& header,
                                                collectives::Placement placement,
                                                collectives::ExpandOptions expand,
                                                std::map<uint32_t, std::vector<v1::Op>> programs,
                                                RankAddressing addressing,
                                                backend::PacketPort& port, Clock clock,
                                                LocalExchange* exchange = nullptr,
                                                EngineLane lane = {});

  // Does what can be done now. Returns whether anything happened (a frame, a step, a timer).
  bool poll();
  // The next time something is due without a frame arriving (timer, compute gap, local step).
  std::optional<transport::Nanos> next_deadline() const;
  // Polls until every rank is done, the run fails, `timeout` passes or `stop` is set (then it
  // returns without failing the engine: see abort); idles without spinning.
  Status run(std::chrono::nanoseconds timeout, const std::atomic<bool>* stop = nullptr);
  // Ends the run from outside: the running ops are recorded as failed with `why`.
  void abort(const std::string& why) { fail(why, clock_()); }

  bool finished() const;
  // The NCCL channel of a QP number this engine gives (qpn_for).
  static uint32_t channel_of_qpn(uint32_t qpn);
  // Ops ended so far and not yet taken (take_records), for progress reports.
  size_t ops_recorded() const { return records_.size(); }
  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  std::vector<OpRecord> take_records();
  EngineCounters counters() const;
  std::vector<QpCounters> qp_counters() const;
  // When the drain pauses and send delays were really in force (the engine's clock).
  std::vector<HookWindow> hook_windows() const { return hooks_.windows(); }

 private:
  struct Connection {
    Connection(uint32_t local, uint32_t peer, uint32_t qpn, const transport::QpConfig& config,
               transport::Nanos cnp_interval_ns)
        : local(local), peer(peer), qpn(qpn), requester(qpn, config), responder(qpn, config, cnp_interval_ns) {}
    uint32_t local;
    uint32_t peer;
    uint32_t qpn;
    transport::Requester requester;
    transport::Responder responder;
    transport::FrameAddress to_peer;
    // Data frames to the peer's QP, from a template of their headers (set with to_peer).
    std::optional<transport::QpFrameEncoder> encoder;
    std::unordered_map<uint64_t, StepRef> sends_by_tag;  // tags posted and not yet acknowledged
    // DCQCN: the QP's rate and the bytes it may send now.
    std::optional<transport::Dcqcn> dcqcn;
    double rate_tokens = 0;
    transport::Nanos tokens_at = 0;
  };
  // Refills a rate-controlled QP's tokens; true if it may send a full packet now.
  bool rate_allows(Connection& c, transport::Nanos now) const;
  // (local rank, peer rank, qpn)
  using ConnectionKey = std::tuple<uint32_t, uint32_t, uint32_t>;
  // A transfer as both ends know it: (sender, receiver, qpn, packed tag, FlowTag::relay_to). The
  // last is 0 but on an NVLink hop to a PXN relay, which it tells apart from the sender's other
  // transfers to the relay (frames never carry it).
  using TransferKey = std::tuple<uint32_t, uint32_t, uint32_t, uint64_t, uint32_t>;
  struct LocalDelivery {
    transport::Nanos at;
    uint32_t sender;
    StepRef send;
    TransferKey transfer;
    bool complete_send = true;  // the sender is ours (false: an arrival from another engine)
    bool deliver = true;        // the receiver is ours (false: handed to its engine)
    bool operator>(const LocalDelivery& o) const { return at > o.at; }
  };
  struct PendingControl {
    transport::Packet packet;
    transport::FrameAddress address;
  };

  Engine() = default;
  // The connection of `local` with `peer` on QP `qpn`, made on first use. Keeps connections_ in
  // key order, so QPs take their turns at the port in the same order however they were made.
  Connection& connection(uint32_t local, uint32_t peer, uint32_t qpn);
  // The connections of the local rank with dense index `local_index` on QP `qpn` (decoded from the
  // QP number, allocated on first use); nullptr if the QP number is not one this engine gives.
  std::vector<Connection*>* slot_of(uint32_t local_index, uint32_t qpn);
  // The connection a received frame belongs to: found by the QP and the peer's address without a
  // map; made (through rank_of_ip_) only for a connection's first frame. nullptr: not ours.
  Connection* connection_for_frame(uint32_t dst_ip, uint32_t src_ip, uint32_t qpn);
  Result<uint32_t> qpn_for(const std::string& comm, uint16_t channel, uint16_t qp) const;
  void start_ready_steps(transport::Nanos now, bool& progress);
  void start_step(RankRunner& runner, const ReadyStep& ready, transport::Nanos now);
  void arrive(const TransferKey& transfer, transport::Nanos now);
  void handle_frame(const backend::Frame& frame, transport::Nanos now);
  // Frames from the port (held ones first, in the order they came) handled now.
  void receive_frames(transport::Nanos now, bool& progress);
  // In a drain pause: frames from the port into the hold while it has room, and with it full,
  // dropped where the NIC's buffer is modelled (drain_buffer_frames); flow control frames are
  // honoured at once, as a NIC's MAC does whatever its host is up to.
  void hold_frames(transport::Nanos now, bool& progress);
  // Lossless: the pause, refresh or resume due for the frames waiting, straight to the port.
  void send_flow_control(transport::Nanos now, bool& progress);
  void run_timers(transport::Nanos now, bool& progress);
  // Arrivals from the other engines of the host, and handovers their channels refused before.
  void exchange_local(bool& progress);
  void transmit(transport::Nanos now, bool& progress);
  // Frames built now: to the port, or behind the send delay's line while one is in force.
  void hand_to_port(std::span<backend::Frame> frames, transport::Nanos now);
  bool any_ready_to_send() const;
  void fail(const std::string& why, transport::Nanos now);

  EngineConfig config_;
  collectives::Placement placement_;
  std::unique_ptr<collectives::Expander> expander_;
  RankAddressing addressing_;
  backend::PacketPort* port_ = nullptr;
  Clock clock_;
  std::unordered_map<std::string, uint32_t> comm_index_;
  std::unordered_map<uint32_t, uint32_t> rank_of_ip_;
  std::map<uint32_t, RankRunner> runners_;
  // Every connection, in (local, peer, qpn) order: the order timers run and QPs share the port.
  std::vector<std::unique_ptr<Connection>> connections_;
  // The connections of each (local rank, communicator) by channel and QP index (slot_of): a rank
  // talks to a handful of peers per QP (ring neighbours, tree parent and children), so a frame
  // finds its connection by a short scan of its slot for its source address. Indexed by
  // local_index * communicators + communicator; the inner table is allocated on first use.
  std::vector<std::vector<std::vector<Connection*>>> by_slot_;
  uint32_t comm_count_ = 0;
  std::unordered_map<uint32_t, uint32_t> local_index_;  // local rank -> dense index (per step)
  std::vector<uint32_t> local_ips_;                     // by dense index: the rank's address
  std::vector<uint32_t> local_ranks_;                   // by dense index
  uint32_t channels_ = 1;
  uint32_t qps_per_connection_ = 1;
  std::set<TransferKey> arrived_;                 // delivered before their receive step was ready
  std::map<TransferKey, std::pair<uint32_t, StepRef>> waiting_receives_;
  std::priority_queue<LocalDelivery, std::vector<LocalDelivery>, std::greater<>> local_;
  LocalExchange* exchange_ = nullptr;
  uint32_t lane_ = 0;
  uint32_t lanes_ = 1;
  uint32_t nics_per_host_ = 1;
  std::deque<LocalArrival> handovers_;  // not yet taken by their channel (it was full)
  std::vector<LocalArrival> arrivals_;  // reused every poll
  std::deque<PendingControl> control_;
  std::vector<backend::Frame> unsent_;  // built, not yet taken by the port
  FaultHooks hooks_;
  PfcPause pfc_;
  PfcSender pfc_sender_;
  // Frames taken from the port in a drain pause and not yet handled, oldest first, at most
  // hold_capacity_ (0, lossy without drain_buffer_frames: nothing is ever held). With
  // drop_when_held_full_, what arrives with the hold full is dropped (the NIC's buffer is full).
  std::deque<backend::Frame> held_;
  size_t hold_capacity_ = 0;
  bool drop_when_held_full_ = false;
  // Frames held by a send delay, oldest first, with the time each may go to the port.
  std::deque<std::pair<transport::Nanos, backend::Frame>> delayed_;
  Pacer pacer_;                         // the port's line rate (off unless pace_gbps > 0)
  std::vector<backend::Frame> rx_frames_;  // reused every poll
  std::vector<backend::Frame> tx_frames_;
  std::vector<transport::Packet> tx_packets_;  // a connection's share of a burst
  std::vector<OpRecord> records_;
  EngineCounters counters_;
  std::string failure_;
};

}  // namespace collide::replayer::engine
