// Transmit rate with full framing and transport, against dpdk-testpmd's txonly engine on the same
// virtual device and frame size, in the same run: our frames come from a requester QP (PSNs,
// opcodes, AckReq), are encoded as complete RoCEv2 frames (ICRC included) and leave through the
// DPDK backend; testpmd sends a prebuilt UDP frame. Prints `figure tx_pps_vs_testpmd_<payload>`.
//
// Usage: replayer_tx_rate_bench [seconds]   (needs root for DPDK; dpdk-testpmd from dpdk-dev)
#include <signal.h>
#include <unistd.h>

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

namespace {

using namespace collide::replayer;
using Clock = std::chrono::steady_clock;

double collide_pps(backend::PacketPort& port, uint32_t payload, double seconds) {
  transport::QpConfig qp;
  qp.mtu = payload;
  qp.max_outstanding = 1u << 30;  // nothing answers on net_null; the window must not close
  transport::Requester requester(0x800011, qp);
  transport::FrameAddress address;
  address.src_mac = port.mac();
  address.src_ip = *wire::Ipv4Address::parse("198.18.0.1");
  address.dst_ip = *wire::Ipv4Address::parse("198.18.0.2");
  std::vector<backend::Frame> frames(32);
  uint64_t sent = 0;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    if (!requester.has_unsent()) requester.post(uint64_t{1} << 30, 0);
    if (!port.acquire(frames).ok()) continue;
    for (auto& f : frames) {
      auto p = requester.next_packet(0);
      auto len = transport::encode_frame({f.data, f.capacity}, *p, address, false);
      if (!len.ok()) {
        std::fprintf(stderr, "%s\n", len.status().to_string().c_str());
        std::exit(1);
      }
      f.len = static_cast<uint32_t>(*len);
    }
    const uint16_t taken = port.submit(frames);
    if (taken < frames.size()) port.release(std::span<backend::Frame>(frames).subspan(taken));
    sent += taken;
  }
  return static_cast<double>(sent) / std::chrono::duration<double>(Clock::now() - start).count();
}

// testpmd's own Tx-pps figures for the same frame size; the best second of the run.
double testpmd_pps(uint32_t frame_bytes, double seconds) {
  auto child = collide::process::ChildProcess::spawn(
      {"dpdk-testpmd", "--no-pci", "--no-huge", "--no-shconf", "-m", "512", "--vdev", "net_null0",
       "-l", "0-1", "--log-level=error", "--", "--forward-mode=txonly", "--stats-period", "1",
       "--total-num-mbufs=16384", "--txpkts=" + std::to_string(frame_bytes), "--no-mlockall"});
  if (!child.ok()) return 0;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds + 2));
  kill(child->pid(), SIGINT);
  (void)child->wait(std::chrono::seconds(10));
  const std::string out = child->remaining_output();
  static const std::regex kTxPps("Tx-pps:\\s+([0-9]+)");
  double best = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), kTxPps), e; it != e; ++it) {
    best = std::max(best, std::stod((*it)[1]));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::stod(argv[1]) : 3.0;
  auto port = backend::open_port("dpdk:net_null0", 0, 4096 + 128);
  if (!port.ok()) {
    std::fprintf(stderr, "%s\n", port.status().to_string().c_str());
    return 1;
  }
  for (uint32_t payload : {1024u, 4096u}) {
    const uint32_t frame = wire::kEthHeaderSize + wire::kIpv4HeaderSize + wire::kUdpHeaderSize +
                           wire::kBthSize + payload + wire::kIcrcSize;
    const double ours = collide_pps(**port, payload, seconds);
    const double peer = testpmd_pps(frame, seconds);
    std::printf("payload %u B (frame %u B): collide %.0f pps, testpmd txonly %.0f pps\n", payload,
                frame, ours, peer);
    std::fflush(stdout);
    if (peer > 0) std::printf("figure tx_pps_vs_testpmd_%u %.3f x\n", payload, ours / peer);
  }
  return 0;
}
