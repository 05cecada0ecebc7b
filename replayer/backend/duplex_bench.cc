// What is compared (both sides one busy core, logical core `lcore`, frames of one size), each over
// a memif pair in its own process: two net_memif ports, server and client of one socket, so what
// one sends the other receives. memif copies each frame into the shared-memory ring on sending
// and out of it into a buffer on receiving: no kernel, but real bytes moved.
// - collide: two engines polled in turn on one thread, ranks 0 and 1 of a ring all-reduce, each
//   engine on its own end of the pair (opened together by backend::open_ports). Every frame is
//   built (RoCEv2 headers, ICRC), received, parsed (ICRC checked), its PSN tracked and
//   acknowledged; payloads are not verified (testpmd does not read them either). The figure's
//   numerator: payload bytes the two responders accepted per second of the all-reduce (headers,
//   ICRC and ACK frames not counted).
// - testpmd --forward-mode=io between the two ends, started with one burst of frames of the same
//   length per port (--tx-first): each frame received on one end is sent on the other, untouched.
//   The denominator: the frames it forwarded per second (both ports' Tx-pps, its best second)
//   times their whole length.
#include "replayer/backend/duplex_bench.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "common/process.h"
#include "replayer/backend/port_factory.h"
#include "replayer/backend/tsc_clock.h"
#include "replayer/engine/engine.h"
#include "replayer/wire/roce_frame.h"

namespace collide::replayer::bench {
namespace {

constexpr uint32_t kMtu = 4096;
constexpr uint32_t kFrameBytes = wire::kEthHeaderSize + wire::kIpv4HeaderSize +
                                 wire::kUdpHeaderSize + wire::kBthSize + kMtu + wire::kIcrcSize;
constexpr uint32_t kMemifBufferBytes = 4352;
// Packets a QP keeps in flight: what `collide replay` keeps by default (its transport defaults).
constexpr uint32_t kMaxOutstanding = 256;
// testpmd's buffers: the frame and the headroom in front of it, rounded up.
constexpr uint32_t kTestpmdMbufBytes = kFrameBytes + 256;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct PortPair {
  std::unique_ptr<backend::PacketPort> a, b;
};

// memif's devices: buffers that hold a whole frame, rings of 2^11 slots.
std::string memif_args(const std::string& socket) {
  return fmt::format("id=0,socket={},bsize={},rsize=11", socket, kMemifBufferBytes);
}

// The two ends of one memif link, both in this process, opened together as a host's ports are.
Result<PortPair> open_memif_pair(const std::string& socket, int lcore) {
  backend::PortOptions options;
  options.lcore = lcore;
  options.max_frame_bytes = kFrameBytes + 128;
  options.dpdk.set_mbuf_count(6143);  // the transmit pool is no larger (DpdkPort)
  options.dpdk.set_rx_ring_size(2048);
  options.dpdk.set_tx_ring_size(2048);
  auto ports = backend::open_ports({"dpdk:net_memif0,role=server," + memif_args(socket),
                                    "dpdk:net_memif1,role=client," + memif_args(socket)},
                                   options);
  if (!ports.ok()) return ports.status();
  return PortPair{std::move(ports->at(0)), std::move(ports->at(1))};
}

struct CollideRun {
  double seconds = 0;
  double cpu_seconds = 0;      // the polling thread's: on a shared machine, less than `seconds`
  uint64_t payload_bytes = 0;  // accepted by the responders, both directions
  uint64_t frames = 0;         // sent by both engines, data and acknowledgements
  uint64_t retransmitted = 0;
};

// One ring all-reduce of `bytes` between rank 0 (port A) and rank 1 (port B).
Result<CollideRun> collide_all_reduce(PortPair& ports, uint64_t bytes,
                                      const backend::TscClock& tsc) {
  v1::TraceHeader header;
  header.set_world_size(2);
  auto* comm = header.add_communicators();
  comm->set_id("world");
  for (uint32_t rank : {0u, 1u}) comm->add_ranks(rank);
  auto placement = collectives::Placement::uniform(2, 1, 1);
  if (!placement.ok()) return placement.status();
  engine::EngineConfig config;
  config.qp.mtu = kMtu;
  config.qp.timeout_exponent = 14;  // 67 ms: the link's round trip is microseconds
  config.qp.max_outstanding = kMaxOutstanding;
  config.verify_payload = false;
  const collectives::ExpandOptions expand;
  const wire::MacAddress mac_a = ports.a->mac(), mac_b = ports.b->mac();
  std::unique_ptr<engine::Engine> engines[2];
  for (uint32_t rank = 0; rank < 2; ++rank) {
    v1::Op op;
    op.set_rank(rank);
    op.set_kind(v1::OP_KIND_ALL_REDUCE);
    op.set_comm("world");
    op.set_bytes(bytes);
    op.set_datatype(v1::DATA_TYPE_FLOAT32);
    engine::RankAddressing addressing;
    addressing.ip_of = [](uint32_t r) { return wire::Ipv4Address{0xc6120001u + r}; };
    const wire::MacAddress peer_mac = rank == 0 ? mac_b : mac_a;
    addressing.next_hop_mac = [peer_mac](uint32_t) { return peer_mac; };
    auto e = engine::Engine::create(config, header, *placement, expand, {{rank, {op}}},
                                    addressing, rank == 0 ? *ports.a : *ports.b,
                                    [&tsc] { return tsc.now(); });
    if (!e.ok()) return e.status();
    engines[rank] = std::move(e).value();
  }
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = thread_cpu_seconds();
  const auto give_up = start + std::chrono::seconds(60);
  uint64_t spins = 0;
  while (!(engines[0]->finished() && engines[1]->finished())) {
    engines[0]->poll();
    engines[1]->poll();
    for (const auto& e : engines) {
      if (e->failed()) {
        const engine::EngineCounters a = engines[0]->counters(), b = engines[1]->counters();
        return internal_error(fmt::format(
            "duplex all-reduce failed: {} (frames sent/received/foreign/bad ICRC: A {}/{}/{}/{}, "
            "B {}/{}/{}/{})",
            e->failure(), a.tx_frames, a.rx_frames, a.rx_foreign, a.icrc_errors, b.tx_frames,
            b.rx_frames, b.rx_foreign, b.icrc_errors));
      }
    }
    if (++spins % 1024 == 0 && std::chrono::steady_clock::now() > give_up) {
      return deadline_exceeded("duplex all-reduce did not finish in 60 s");
    }
  }
  CollideRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.cpu_seconds = thread_cpu_seconds() - cpu_start;
  for (const auto& e : engines) {
    const engine::EngineCounters c = e->counters();
    run.payload_bytes += c.responders.bytes_received;
    run.frames += c.tx_frames;
    run.retransmitted += c.requesters.retransmitted_packets;
    if (c.icrc_errors != 0) return data_loss("frames with a bad ICRC crossed the link");
  }
  // A ring all-reduce of two ranks sends half the buffer each way twice (reduce-scatter, then
  // all-gather): every byte of the buffer crosses once in each direction.
  if (run.payload_bytes != 2 * bytes) {
    return data_loss(fmt::format("the responders accepted {} payload bytes, the all-reduce "
                                 "moves {}", run.payload_bytes, 2 * bytes));
  }
  return run;
}

struct TestpmdRun {
  double pps = 0;  // frames forwarded per second, both ports, its best second
};

// testpmd's main thread on core 0, its forwarding on `lcore` (>= 1), over its own memif pair.
Result<TestpmdRun> testpmd_io(double seconds, int lcore, const std::string& socket) {
  auto child = process::ChildProcess::spawn(
      {"dpdk-testpmd", "--no-pci", "--no-huge", "--no-shconf", "-m", "512", "--vdev",
       "net_memif0,role=server," + memif_args(socket), "--vdev",
       "net_memif1,role=client," + memif_args(socket), "-l", fmt::format("0,{}", lcore),
       "--log-level=error", "--", "--forward-mode=io", "--tx-first", "--stats-period", "1",
       "--total-num-mbufs=16384", "--mbuf-size=" + std::to_string(kTestpmdMbufBytes),
       "--txpkts=" + std::to_string(kFrameBytes), "--no-mlockall"});
  if (!child.ok()) return child.status();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds + 2));
  kill(child->pid(), SIGINT);
  (void)child->wait(std::chrono::seconds(10));
  const std::string out = child->remaining_output();
  if (out.find("io packet forwarding") == std::string::npos ||
      out.find("Logical Core " + std::to_string(lcore) + " ") == std::string::npos) {
    return internal_error("testpmd did not forward in io mode on lcore " +
                          std::to_string(lcore) + ":\n" + out);
  }
  // Each stats period prints port 0, then port 1: a period's rate is the pair's sum.
  static const std::regex kTxPps("Tx-pps:\\s+([0-9]+)");
  std::vector<double> per_port;
  for (std::sregex_iterator it(out.begin(), out.end(), kTxPps), e; it != e; ++it) {
    auto pps = parse_number<double>((*it).str(1), "testpmd Tx-pps");
    if (!pps.ok()) return pps.status();
    per_port.push_back(*pps);
  }
  TestpmdRun run;
  for (size_t i = 0; i + 1 < per_port.size(); i += 2) {
    run.pps = std::max(run.pps, per_port[i] + per_port[i + 1]);
  }
  if (run.pps <= 0) return internal_error("testpmd forwarded nothing:\n" + out);
  return run;
}

}  // namespace

int run_duplex_bench(double seconds_per_round, int rounds, int lcore) {
  if (lcore < 1) {
    std::fprintf(stderr, "the duplex bench forwards on lcore >= 1 (testpmd's main is core 0)\n");
    return 2;
  }
  const std::string socket = fmt::format("/tmp/collide-duplex-{}.sock", ::getpid());
  auto ports = open_memif_pair(socket, lcore);
  if (!ports.ok()) {
    std::fprintf(stderr, "%s\n", ports.status().to_string().c_str());
    return 1;
  }
  const auto tsc = backend::TscClock::calibrate();
  // A first, shorter all-reduce sizes the rounds' to last about `seconds_per_round`.
  auto probe = collide_all_reduce(*ports, 512ull << 20, tsc);
  if (!probe.ok()) {
    std::fprintf(stderr, "%s\n", probe.status().to_string().c_str());
    return 1;
  }
  const double probe_rate = static_cast<double>(probe->payload_bytes) / probe->seconds;
  const uint64_t bytes = std::max<uint64_t>(
      64ull << 20, static_cast<uint64_t>(probe_rate * seconds_per_round / 2) & ~uint64_t{0xfffff});
  std::printf("duplex: one busy core (lcore %d), frames of %u B (RoCE MTU %u), a memif pair in "
              "one process each (copies frames in and out of shared memory); collide: ring "
              "all-reduce of %.0f MiB between two engines, each the other's peer, full RoCEv2 "
              "framing and ICRC both ways, payload not verified; testpmd: io forwarding between "
              "the pair's ports, frames untouched; %d alternating rounds, each side's best\n",
              lcore, kFrameBytes, kMtu, static_cast<double>(bytes) / (1 << 20), rounds);
  CollideRun best;
  TestpmdRun peer;
  std::string ours_by_round, theirs_by_round;
  for (int round = 0; round < rounds; ++round) {
    auto ours = collide_all_reduce(*ports, bytes, tsc);
    if (!ours.ok()) {
      std::fprintf(stderr, "%s\n", ours.status().to_string().c_str());
      return 1;
    }
    const double goodput = static_cast<double>(ours->payload_bytes) / ours->seconds;
    if (best.seconds == 0 || goodput > static_cast<double>(best.payload_bytes) / best.seconds) {
      best = *ours;
    }
    auto theirs = testpmd_io(seconds_per_round, lcore, socket + "-testpmd");
    if (!theirs.ok()) {
      std::fprintf(stderr, "%s\n", theirs.status().to_string().c_str());
      return 1;
    }
    peer.pps = std::max(peer.pps, theirs->pps);
    ours_by_round += fmt::format("{}{:.2f}", round > 0 ? " " : "", goodput / 1e9);
    theirs_by_round += fmt::format("{}{:.2f}", round > 0 ? " " : "",
                                   theirs->pps * kFrameBytes / 1e9);
  }
  const double goodput = static_cast<double>(best.payload_bytes) / best.seconds;
  const double peer_bytes = peer.pps * kFrameBytes;
  std::printf("collide: %.3f GB/s payload goodput (%.0f payload bytes in %.3f s, the polling "
              "thread on the CPU %.0f%% of it; %.0f frames/s "
              "sent by both engines incl. ACKs, %lu retransmitted); testpmd io: %.3f GB/s "
              "forwarded (%.0f frames/s of %u B); GB/s by round: collide [%s] testpmd [%s]\n",
              goodput / 1e9, static_cast<double>(best.payload_bytes), best.seconds,
              100 * best.cpu_seconds / best.seconds,
              static_cast<double>(best.frames) / best.seconds,
              static_cast<unsigned long>(best.retransmitted), peer_bytes / 1e9, peer.pps,
              kFrameBytes, ours_by_round.c_str(), theirs_by_round.c_str());
  // testpmd's busy forwarding thread is not timed; collide's payload per second of CPU it got says
  // how far the wall-clock figure is from what a core of its own would give.
  std::printf("collide payload per CPU second of its thread: %.3f GB/s (%.3f x testpmd's "
              "forwarded bytes per wall second)\n",
              static_cast<double>(best.payload_bytes) / best.cpu_seconds / 1e9,
              static_cast<double>(best.payload_bytes) / best.cpu_seconds / peer_bytes);
  std::printf("figure duplex_goodput_vs_testpmd_io %.3f x\n", goodput / peer_bytes);
  std::fflush(stdout);
  // One end at a time, the server after its interrupt thread has seen the client go: memif frees
  // a connection's memory there, and closing both at once races with it.
  ports->b.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ports->a.reset();
  return 0;
}

}  // namespace collide::replayer::bench
