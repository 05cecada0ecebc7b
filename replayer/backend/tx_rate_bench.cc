// Transmit rate with full framing and transport, against dpdk-testpmd's txonly engine on the same
// virtual device and frame size, in the same run: our frames come from a requester QP (PSNs,
// opcodes, AckReq), are encoded as complete RoCEv2 frames (ICRC included) and leave through the
// DPDK backend; testpmd sends a prebuilt UDP frame. Prints `figure tx_pps_vs_testpmd_<payload>`.
//
// Every 256th burst, one frame is parsed back and its ICRC recomputed over every byte with the
// reference function: the rate only counts if the frames are right.
//
// Usage: replayer_tx_rate_bench [seconds] [--collide-only] [--payload <bytes>]
//        (needs root for DPDK; dpdk-testpmd from dpdk-dev)
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/process.h"
#include "replayer/backend/port_factory.h"
#include "replayer/transport/frame_codec.h"
#include "replayer/transport/requester.h"
#include "replayer/wire/roce_frame.h"

namespace {

using namespace collide::replayer;
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

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Parses a sent frame back: headers, length, ICRC over every byte, and the payload's content.
bool frame_is_right(const backend::Frame& f, const transport::Packet& p, bool pattern) {
  auto d = transport::decode_frame({f.data, f.len}, pattern);
  if (!d.ok() || !d->icrc_ok || !d->pattern_ok || d->packet.payload_bytes != p.payload_bytes ||
      d->packet.psn != (p.psn & wire::kMaxPsn) || d->packet.opcode != p.opcode) {
    return false;
  }
  if (pattern) return true;
  // Unverified payloads are zeros: reused buffers must not show an earlier frame's bytes.
  auto parsed = wire::parse_roce_frame({f.data, f.len});
  return parsed.ok() && std::all_of(parsed->payload.begin(), parsed->payload.end(),
                                    [](uint8_t b) { return b == 0; });
}

CollideRate collide_pps(backend::PacketPort& port, uint32_t payload, double seconds,
                        bool pattern) {
  transport::QpConfig qp;
  qp.mtu = payload;
  qp.max_outstanding = 1u << 30;  // nothing answers on net_null; the window must not close
  transport::Requester requester(0x800011, qp);
  transport::FrameAddress address;
  address.src_mac = port.mac();
  address.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  address.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  std::vector<backend::Frame> frames(32);
  CollideRate rate;
  uint64_t sent = 0;
  uint64_t reused = 0;
  uint64_t bursts = 0;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  const auto end = start + std::chrono::duration<double>(seconds);
  auto window_start = start;
  uint64_t window_sent = 0;
  for (auto now = start; now < end; now = Clock::now()) {
    if (now - window_start >= std::chrono::seconds(1)) {
      rate.pps = std::max(rate.pps, static_cast<double>(sent - window_sent) /
                                        std::chrono::duration<double>(now - window_start).count());
      window_start = now;
      window_sent = sent;
    }
    if (!requester.has_unsent()) requester.post(uint64_t{1} << 30, 0);
    if (!port.acquire(frames).ok()) continue;
    const bool check = bursts++ % kCheckEveryBursts == 0;
    for (auto& f : frames) {
      auto p = requester.next_packet(0);
      transport::PayloadMemo memo{f.payload_held};
      auto len = transport::encode_frame({f.data, f.capacity}, *p, address, pattern, &memo);
      f.payload_written = memo.written;
      if (memo.written != 0 && memo.written == memo.held) ++reused;
      if (!len.ok()) {
        std::fprintf(stderr, "%s\n", len.status().to_string().c_str());
        std::exit(1);
      }
      f.len = static_cast<uint32_t>(*len);
      if (check && &f == &frames.back()) {
        ++rate.frames_checked;
        if (!frame_is_right(f, *p, pattern)) ++rate.frames_bad;
      }
    }
    const uint16_t taken = port.submit(frames);
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
  static const std::regex kTxPps("Tx-pps:\\s+([0-9]+)");
  double best = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), kTxPps), e; it != e; ++it) {
    best = std::max(best, std::stod((*it)[1]));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3.0;
  bool collide_only = false;
  std::vector<uint32_t> payloads = {1024, 4096};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--collide-only") {
      collide_only = true;
    } else if (arg == "--payload" && i + 1 < argc) {
      payloads = {static_cast<uint32_t>(std::stoul(argv[++i]))};
    } else {
      seconds = std::stod(arg);
    }
  }
  auto port = backend::open_port("dpdk:net_null0", 0, 4096 + 128);
  if (!port.ok()) {
    std::fprintf(stderr, "%s\n", port.status().to_string().c_str());
    return 1;
  }
  int status = 0;
  for (uint32_t payload : payloads) {
    const uint32_t frame = wire::kEthHeaderSize + wire::kIpv4HeaderSize + wire::kUdpHeaderSize +
                           wire::kBthSize + payload + wire::kIcrcSize;
    const CollideRate zeros = collide_pps(**port, payload, seconds, false);
    // With the verifiable pattern (what --verify-payload sends): informative, not the figure.
    const CollideRate pattern = collide_pps(**port, payload, seconds / 2, true);
    for (const auto* r : {&zeros, &pattern}) {
      if (r->frames_bad > 0 || r->frames_checked == 0) {
        std::fprintf(stderr, "payload %u B: %lu of %lu sampled frames are wrong\n", payload,
                     static_cast<unsigned long>(r->frames_bad),
                     static_cast<unsigned long>(r->frames_checked));
        status = 1;
      }
    }
    const double peer = collide_only ? 0 : testpmd_pps(frame, seconds);
    std::printf("payload %u B (frame %u B): collide %.0f pps (mean %.0f, %.0f CPU ns/frame, "
                "%.0f%% of payloads already in place; pattern payload %.0f pps, %.0f CPU "
                "ns/frame; %lu sampled frames verified), testpmd txonly %.0f pps\n",
                payload, frame, zeros.pps, zeros.mean_pps, zeros.cpu_ns_per_frame,
                zeros.payload_reuse * 100, pattern.pps, pattern.cpu_ns_per_frame,
                static_cast<unsigned long>(zeros.frames_checked + pattern.frames_checked), peer);
    std::fflush(stdout);
    if (peer > 0 && status == 0) {
      std::printf("figure tx_pps_vs_testpmd_%u %.3f x\n", payload, zeros.pps / peer);
    }
  }
  return status;
}
