// Transmit rate with full framing and transport, against dpdk-testpmd's txonly engine on the same
// virtual device and frame size, in the same run. Prints `figure tx_pps_vs_testpmd_<payload>`.
//
// What each side does, per frame, on one busy core (logical core 1 for both: testpmd forwards
// on its second lcore, and this process runs its EAL on lcore 1), in bursts of 32, with its best
// one-second window over rounds that alternate the two sides taken as its rate:
// - collide: a requester QP hands out packets (PSNs, FIRST/MIDDLE/LAST/ONLY opcodes, AckReq
//   cadence, counters, RTT probe) for 1 GiB messages; each is encoded as a complete RoCEv2 frame
//   (Ethernet, IPv4 with checksum, UDP, BTH, RETH where due, ICRC) into an mbuf from the DPDK
//   backend, and the burst leaves through rte_eth_tx_burst. The zero payload is not rewritten
//   when the mbuf's memo says it already holds it (reported as "payloads already in place").
// - testpmd: takes mbufs from its pool and copies a prebuilt Ethernet/IPv4/UDP header into
//   each (constant: no per-frame checksum or ICRC), payload untouched, then rte_eth_tx_burst.
// net_null frees every frame on both sides.
//
// Every 256th burst, one frame is parsed back and its ICRC recomputed over every byte with the
// reference function: the rate only counts if the frames are right.
//
// With --engines-scaling, instead: the same sender on two net_null ports at once, each on its own
// thread pinned to its own core (as a host's engines, one per NIC), against one on one core, in
// alternating rounds; prints `figure tx_pps_2_engines_vs_1`, the median over rounds of the two
// senders' summed mean rate over the one's.
//
// With --queues-scaling, instead: the same with two queues of one net_null port (as a NIC's
// engines, one per queue) against one queue; prints `figure tx_pps_2_queues_vs_1`.
//
// With --duplex, instead: two collide engines moving an all-reduce between them over a pair of
// in-memory DPDK ports, against testpmd's io forwarding (duplex_bench.h); prints
// `figure duplex_goodput_vs_testpmd_io`.
//
// Usage: replayer_tx_rate_bench [seconds] [--rounds <n>] [--collide-only] [--payload <bytes>]
//                               [--engines-scaling | --queues-scaling | --duplex]
//        (each side runs `seconds` per round, the rounds alternating the sides; default 3 x 3 s)
//        (needs root for DPDK; dpdk-testpmd from dpdk-dev)
#include <pthread.h>
#include <rte_lcore.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "common/process.h"
#include "replayer/backend/duplex_bench.h"
#include "replayer/backend/port_factory.h"
#include "replayer/transport/frame_codec.h"
#include "replayer/transport/requester.h"
#include "replayer/wire/roce_frame.h"

namespace {

using namespace collide::replayer;
using collide::parse_number;
using collide::Status;
using Clock = std::chrono::steady_clock;

struct CollideRate {
  double pps = 0;       // the best one-second window, as testpmd's figure is its best second
  double mean_pps = 0;  // over the whole run
  double cpu_ns_per_frame = 0;  // this thread's CPU time: what a frame costs on a busy machine
  uint64_t frames_checked = 0;
  uint64_t frames_bad = 0;
  double payload_reuse = 0;  // share of frames whose buffer already held their payload
};

constexpr uint64_t kCheckEveryBursts = 256;
constexpr uint32_t kRemoteQpn = 0x800011;
// Frames per burst, on both sides: testpmd's default burst (--burst) is 32 as well.
constexpr size_t kBurst = 32;
// The core both sides send from: testpmd's forwarding lcore with "-l 0-1".
constexpr int kLcore = 1;

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Parses a sent frame back: headers, length, the ICRC recomputed over every byte with the
// reference function (not the receiver's shortcut), the IPv4 checksum, and the payload's content.
bool frame_is_right(const backend::Frame& f, const transport::Packet& p, bool pattern) {
  const std::span<const uint8_t> frame(f.data, f.len);
  auto parsed = wire::parse_roce_frame(frame);
  if (!parsed.ok() || !parsed->icrc_ok() ||
      wire::ipv4_header_checksum(frame.subspan(wire::kEthHeaderSize, wire::kIpv4HeaderSize)) != 0) {
    return false;
  }
  auto d = transport::decode_frame(frame, pattern);
  if (!d.ok() || !d->pattern_ok || d->packet.payload_bytes != p.payload_bytes ||
      d->packet.psn != (p.psn & wire::kMaxPsn) || d->packet.opcode != p.opcode) {
    return false;
  }
  // Unverified payloads are zeros: reused buffers must not show an earlier frame's bytes.
  return pattern || std::all_of(parsed->payload.begin(), parsed->payload.end(),
                                [](uint8_t b) { return b == 0; });
}

CollideRate collide_pps(backend::PacketPort& port, uint32_t payload, double seconds,
                        bool pattern) {
  transport::QpConfig qp;
  qp.mtu = payload;
  qp.max_outstanding = 1u << 30;  // nothing answers on net_null; the window must not close
  transport::Requester requester(kRemoteQpn, qp);
  transport::FrameAddress address;
  address.src_mac = port.mac();
  address.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  address.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  const transport::QpFrameEncoder encoder(address, kRemoteQpn, payload);
  std::vector<backend::Frame> frames(kBurst);
  std::vector<transport::Packet> packets(kBurst);
  CollideRate rate;
  uint64_t sent = 0;
  uint64_t reused = 0;
  uint64_t bursts = 0;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  const auto end = start + std::chrono::duration<double>(seconds);
  auto window_start = start;
  uint64_t window_sent = 0;
  // The clock is read every few bursts: a read per burst cost more than a frame's ICRC.
  constexpr uint64_t kBurstsPerClockRead = 16;
  for (uint64_t iteration = 0;; ++iteration) {
    if (iteration % kBurstsPerClockRead == 0) {
      const auto now = Clock::now();
      if (now >= end) break;
      if (now - window_start >= std::chrono::seconds(1)) {
        const double window = std::chrono::duration<double>(now - window_start).count();
        rate.pps = std::max(rate.pps, static_cast<double>(sent - window_sent) / window);
        window_start = now;
        window_sent = sent;
      }
    }
    if (!port.acquire(frames).ok()) continue;
    size_t n = requester.next_packets(0, packets);
    if (n < packets.size()) {
      requester.post(uint64_t{1} << 30, 0);
      n += requester.next_packets(0, std::span<transport::Packet>(packets).subspan(n));
    }
    const bool check = bursts++ % kCheckEveryBursts == 0;
    for (size_t i = 0; i < n; ++i) {
      backend::Frame& f = frames[i];
      const transport::Packet& p = packets[i];
      transport::PayloadMemo memo{f.payload_held};
      auto len = encoder.encode({f.data, f.capacity}, p, pattern, &memo);
      f.payload_written = memo.written;
      if (memo.written != 0 && memo.written == memo.held) ++reused;
      if (!len.ok()) {
        std::fprintf(stderr, "%s\n", len.status().to_string().c_str());
        std::exit(1);
      }
      f.len = static_cast<uint32_t>(*len);
      if (check && i + 1 == n) {
        ++rate.frames_checked;
        if (!frame_is_right(f, p, pattern)) ++rate.frames_bad;
      }
    }
    const auto built = std::span<backend::Frame>(frames).first(n);
    const uint16_t taken = port.submit(built);
    if (taken < frames.size()) port.release(std::span<backend::Frame>(frames).subspan(taken));
    sent += taken;
  }
  rate.mean_pps =
      static_cast<double>(sent) / std::chrono::duration<double>(Clock::now() - start).count();
  if (rate.pps == 0) rate.pps = rate.mean_pps;  // runs shorter than a second
  rate.payload_reuse =
      static_cast<double>(reused) / static_cast<double>(std::max<uint64_t>(sent, 1));
  rate.cpu_ns_per_frame = (thread_cpu_seconds() - cpu_start) * 1e9 / static_cast<double>(sent);
  return rate;
}

// Headroom in front of the frame (RTE_PKTMBUF_HEADROOM), rounded up.
constexpr uint32_t kMbufOverhead = 256;

// testpmd's own Tx-pps figures for the same frame size; the best second of the run.
double testpmd_pps(uint32_t frame_bytes, double seconds) {
  auto child = collide::process::ChildProcess::spawn(
      {"dpdk-testpmd", "--no-pci", "--no-huge", "--no-shconf", "-m", "512", "--vdev", "net_null0",
       "-l", "0-1", "--log-level=error", "--", "--forward-mode=txonly", "--stats-period", "1",
       "--total-num-mbufs=16384",
       // One segment per frame, as ours: the default 2176-byte buffers cannot hold 4 KiB
       // payloads, and testpmd would fall back to 64-byte frames. (It checks --txpkts against
       // the buffer size given before it.)
       "--mbuf-size=" + std::to_string(frame_bytes + kMbufOverhead),
       "--txpkts=" + std::to_string(frame_bytes), "--no-mlockall"});
  if (!child.ok()) return 0;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds + 2));
  kill(child->pid(), SIGINT);
  (void)child->wait(std::chrono::seconds(10));
  const std::string out = child->remaining_output();
  // Its own report of the frame length it sends: anything else would compare other frames.
  if (out.find("packet len=" + std::to_string(frame_bytes) + " ") == std::string::npos) {
    std::fprintf(stderr, "testpmd did not send %u-byte frames:\n%s\n", frame_bytes, out.c_str());
    return 0;
  }
  // And its core and burst, so both sides send from the same core in bursts of the same size.
  if (out.find("Logical Core " + std::to_string(kLcore) + " ") == std::string::npos ||
      out.find("packets/burst=" + std::to_string(kBurst) + "\n") == std::string::npos) {
    std::fprintf(stderr, "testpmd did not forward on lcore %d in bursts of %zu:\n%s\n", kLcore,
                 kBurst, out.c_str());
    return 0;
  }
  static const std::regex kTxPps("Tx-pps:\\s+([0-9]+)");
  double best = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), kTxPps), e; it != e; ++it) {
    auto pps = parse_number<double>((*it).str(1), "testpmd Tx-pps");
    if (!pps.ok()) {
      std::fprintf(stderr, "%s\n", pps.status().message().c_str());
      return 0;
    }
    best = std::max(best, *pps);
  }
  return best;
}

constexpr uint32_t kScalingBufferBytes = 2048;

// The cores senders run on, one each: the EAL's core first, then the other core of a 2-core host.
constexpr int kSenderCores[] = {kLcore, 0};

// Senders on their own ports, each on its own thread pinned to its own core and registered with
// the EAL (so it has its own mbuf caches, as an lcore does), at once: their summed mean rate.
// False if a sampled frame was wrong or a thread could not be placed.
// `cores_used`: the CPU time the senders got over the wall time, which on a loaded machine says
// how much of two cores the scheduler gave them.
bool concurrent_pps(const std::vector<backend::PacketPort*>& ports, uint32_t payload,
                    double seconds, double& pps, double& cores_used) {
  std::vector<CollideRate> rates(ports.size());
  std::vector<std::string> errors(ports.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ports.size(); ++i) {
    threads.emplace_back([&, i] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(kSenderCores[i], &set);
      if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
        errors[i] = "cannot pin a sender to core " + std::to_string(kSenderCores[i]);
        return;
      }
      if (rte_thread_register() != 0) {
        errors[i] = "the EAL has no lcore left for a sender";
        return;
      }
      rates[i] = collide_pps(*ports[i], payload, seconds, false);
      rte_thread_unregister();
    });
  }
  for (std::thread& t : threads) t.join();
  pps = 0;
  cores_used = 0;
  for (size_t i = 0; i < ports.size(); ++i) {
    if (!errors[i].empty()) {
      std::fprintf(stderr, "%s\n", errors[i].c_str());
      return false;
    }
    if (rates[i].frames_bad > 0 || rates[i].frames_checked == 0) {
      std::fprintf(stderr, "sender %zu: %lu of %lu sampled frames are wrong\n", i,
                   static_cast<unsigned long>(rates[i].frames_bad),
                   static_cast<unsigned long>(rates[i].frames_checked));
      return false;
    }
    pps += rates[i].mean_pps;
    cores_used += rates[i].mean_pps * rates[i].cpu_ns_per_frame * 1e-9;
  }
  return true;
}

// One sender against two at once (the first and `second`), each on its own core, in alternating
// rounds; prints `figure <figure>`, the median over rounds of the two's rate over the one's.
int scaling_rounds(backend::PacketPort& first, backend::PacketPort& second, uint32_t payload,
                   double seconds, int rounds, const char* what, const char* figure) {
  if (payload + 128 > kScalingBufferBytes) {
    std::fprintf(stderr, "scaling runs send payloads of at most %u B\n", kScalingBufferBytes - 128);
    return 1;
  }
  std::printf("%s: payload %u B, net_null, bursts of %zu, one sender per core (cores %d and %d), "
              "%d alternating rounds of %.1f s, mean rate per round\n",
              what, payload, kBurst, kSenderCores[0], kSenderCores[1], rounds, seconds);
  std::vector<double> ratios;
  std::vector<double> per_cpu_ratios;  // frames per CPU second: whether the senders slow each other
  std::string by_round;
  for (int round = 0; round < rounds; ++round) {
    double one = 0, two = 0, one_cores = 0, two_cores = 0;
    if (!concurrent_pps({&first}, payload, seconds, one, one_cores) ||
        !concurrent_pps({&first, &second}, payload, seconds, two, two_cores) || one <= 0) {
      return 1;
    }
    ratios.push_back(two / one);
    if (one_cores > 0 && two_cores > 0) per_cpu_ratios.push_back((two / two_cores) / (one / one_cores));
    by_round += fmt::format("{}{:.0f}/{:.0f} ({:.2f}/{:.2f} cores)", round > 0 ? ", " : "",
                            one / 1e3, two / 1e3, one_cores, two_cores);
  }
  std::sort(ratios.begin(), ratios.end());
  std::sort(per_cpu_ratios.begin(), per_cpu_ratios.end());
  std::printf("kpps by round, one sender / two senders (CPU the senders got): [%s]\n",
              by_round.c_str());
  // On a machine others load, the scheduler may give the two senders no more CPU than the one
  // (Linux's autogroup shares the CPU per session, not per thread): the rate each got per CPU
  // second tells whether they scale apart from that.
  if (!per_cpu_ratios.empty()) {
    std::printf("frames per CPU second, two senders vs one: %.3f (median)\n",
                per_cpu_ratios[per_cpu_ratios.size() / 2]);
  }
  std::printf("figure %s %.3f x\n", figure, ratios[ratios.size() / 2]);
  return 0;
}

// Two senders on two ports against one on one (engines per NIC).
int engines_scaling(backend::PacketPort& first, uint32_t payload, double seconds, int rounds) {
  auto second = backend::open_port("dpdk:net_null1", kLcore, kScalingBufferBytes);
  if (!second.ok()) {
    std::fprintf(stderr, "%s\n", second.status().to_string().c_str());
    return 1;
  }
  return scaling_rounds(first, **second, payload, seconds, rounds, "engines scaling",
                        "tx_pps_2_engines_vs_1");
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3.0;
  int rounds = 3;
  bool collide_only = false;
  bool scaling = false;
  bool queues_scaling = false;
  bool duplex = false;
  std::vector<uint32_t> payloads = {1024, 4096};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    Status bad;
    if (arg == "--collide-only") {
      collide_only = true;
    } else if (arg == "--engines-scaling") {
      scaling = true;
    } else if (arg == "--queues-scaling") {
      queues_scaling = true;
    } else if (arg == "--duplex") {
      duplex = true;
    } else if (arg == "--rounds" && i + 1 < argc) {
      auto n = parse_number<int>(argv[++i], "--rounds");
      if (n.ok()) rounds = std::max(1, *n);
      bad = n.status();
    } else if (arg == "--payload" && i + 1 < argc) {
      auto n = parse_number<uint32_t>(argv[++i], "--payload");
      if (n.ok()) payloads = {*n};
      bad = n.status();
    } else {
      auto n = parse_number<double>(arg, "seconds per round");
      if (n.ok()) seconds = *n;
      bad = n.status();
    }
    if (!bad.ok()) {
      std::fprintf(stderr, "%s\nusage: replayer_tx_rate_bench [SECONDS] [--rounds N] "
                   "[--payload BYTES] [--collide-only] [--engines-scaling | --queues-scaling | --duplex]\n", bad.message().c_str());
      return 2;
    }
  }
  if (duplex) return bench::run_duplex_bench(seconds, rounds, kLcore);
  if (queues_scaling) {
    // One port of two queues, frames left where they are sent (net_null has no flow rules).
    backend::PortOptions options;
    options.lcore = kLcore;
    options.max_frame_bytes = kScalingBufferBytes;
    options.dpdk.set_queues(2);
    options.dpdk.set_queue_steering(collide::v1::DpdkPortConfig::QUEUE_STEERING_NONE);
    auto ports = backend::open_ports({"dpdk:net_null0"}, options);
    if (!ports.ok()) {
      std::fprintf(stderr, "%s\n", ports.status().to_string().c_str());
      return 1;
    }
    backend::PacketPort& nic = *ports->front();
    return scaling_rounds(nic.queue(0), nic.queue(1), payloads.front(), seconds, rounds,
                          "queues scaling", "tx_pps_2_queues_vs_1");
  }
  // Two ports' pools must fit the EAL's memory: the scaling run's 1 KiB frames take 2 KiB buffers.
  const uint32_t buffer_bytes = scaling ? kScalingBufferBytes : 4096 + 128;
  auto port = backend::open_port("dpdk:net_null0", kLcore, buffer_bytes);
  if (!port.ok()) {
    std::fprintf(stderr, "%s\n", port.status().to_string().c_str());
    return 1;
  }
  if (scaling) return engines_scaling(**port, payloads.front(), seconds, rounds);
  std::printf("both sides: one busy core (lcore %d), bursts of %zu, net_null, %d alternating "
              "rounds of %.1f s, best 1 s window; collide: requester QP + full RoCEv2 encoding "
              "(IPv4 checksum, BTH, RETH, ICRC) per frame; testpmd txonly: constant prebuilt UDP "
              "header per frame\n",
              kLcore, kBurst, rounds, seconds);
  int status = 0;
  for (uint32_t payload : payloads) {
    const uint32_t frame = wire::kEthHeaderSize + wire::kIpv4HeaderSize + wire::kUdpHeaderSize +
                           wire::kBthSize + payload + wire::kIcrcSize;
    // Rounds that alternate the two sides, each side's rate its best one-second window over all
    // rounds: on a shared machine the load changes between runs, and a single run of each would
    // compare one side's quiet second with the other's busy one.
    CollideRate zeros;
    double peer = 0;
    std::string ours_by_round, theirs_by_round;
    for (int round = 0; round < rounds; ++round) {
      const CollideRate r = collide_pps(**port, payload, seconds, false);
      zeros.frames_checked += r.frames_checked;
      zeros.frames_bad += r.frames_bad;
      if (r.pps > zeros.pps) {
        const uint64_t checked = zeros.frames_checked, bad = zeros.frames_bad;
        zeros = r;
        zeros.frames_checked = checked;
        zeros.frames_bad = bad;
      }
      if (round > 0) ours_by_round += ' ';
      ours_by_round += std::to_string(std::lround(r.pps / 1e3));
      if (!collide_only) {
        const double t = testpmd_pps(frame, seconds);
        peer = std::max(peer, t);
        if (round > 0) theirs_by_round += ' ';
        theirs_by_round += std::to_string(std::lround(t / 1e3));
      }
    }
    // With the verifiable pattern (what --verify-payload sends): informative, not the figure.
    const CollideRate pattern = collide_pps(**port, payload, seconds / 2, true);
    for (const CollideRate* r : std::initializer_list<const CollideRate*>{&zeros, &pattern}) {
      if (r->frames_bad > 0 || r->frames_checked == 0) {
        std::fprintf(stderr, "payload %u B: %lu of %lu sampled frames are wrong\n", payload,
                     static_cast<unsigned long>(r->frames_bad),
                     static_cast<unsigned long>(r->frames_checked));
        status = 1;
      }
    }
    std::printf("payload %u B (frame %u B): collide %.0f pps (mean %.0f, %.0f CPU ns/frame, "
                "%.0f%% of payloads already in place; pattern payload %.0f pps, %.0f CPU "
                "ns/frame; %lu sampled frames verified), testpmd txonly %.0f pps; "
                "kpps by round: collide [%s] testpmd [%s]\n",
                payload, frame, zeros.pps, zeros.mean_pps, zeros.cpu_ns_per_frame,
                zeros.payload_reuse * 100, pattern.pps, pattern.cpu_ns_per_frame,
                static_cast<unsigned long>(zeros.frames_checked + pattern.frames_checked), peer,
                ours_by_round.c_str(), theirs_by_round.c_str());
    std::fflush(stdout);
    if (peer > 0 && status == 0) {
      std::printf("figure tx_pps_vs_testpmd_%u %.3f x\n", payload, zeros.pps / peer);
    }
  }
  return status;
}
