// One end of the RoCEv2 smoke test: sends or receives numbered RoCEv2 frames through a DPDK port,
// inside a network namespace, and prints what it counted as one JSON line (FrameCounters).
//
// Exit codes: 0 done, 2 bad arguments, 3 the DPDK device could not be opened (the caller may try
// another PMD), 4 any other failure.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <rte_mbuf.h>

#include <chrono>
#include <iostream>
#include <sstream>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <google/protobuf/util/json_util.h>

#include "collide/port.pb.h"
#include "common/logging.h"
#include "common/netns.h"
#include "replayer/dpdk/dpdk_port.h"
#include "replayer/dpdk/eal.h"
#include "replayer/wire/roce_frame.h"

namespace {

using namespace collide;
using namespace collide::replayer;
using Clock = std::chrono::steady_clock;

constexpr int kExitBadArgs = 2;
constexpr int kExitNoDevice = 3;
constexpr int kExitFailure = 4;
constexpr uint16_t kBurst = 32;

struct Options {
  std::string role;
  std::string netns;
  std::string device;
  int lcore = 0;
  uint32_t count = 10000;
  uint32_t payload_bytes = 1024;
  std::string src_ip = "198.18.0.1";
  std::string dst_ip = "198.18.0.2";
  std::string dst_mac;
  uint32_t dest_qp = 17;
  int timeout_ms = 20000;
  int linger_ms = 300;
  int burst_gap_us = 200;
};

// The payload byte at `offset` of the frame with `psn`: every frame differs, so a misdelivered or
// damaged frame shows up as a payload error even where its ICRC was recomputed.
uint8_t pattern_byte(uint32_t psn, size_t offset) {
  return static_cast<uint8_t>(psn * 131 + offset * 7 + 1);
}

void print_counters(const v1::FrameCounters& counters) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(counters, &json, options);
  std::cout << json << std::endl;
}

int run_sender(const Options& opt, dpdk::DpdkPort& port) {
  wire::RoceHeaders h;
  h.endpoints.src_mac = port.mac();
  auto dst_mac = wire::MacAddress::parse(opt.dst_mac);
  auto src_ip = wire::Ipv4Address::parse(opt.src_ip);
  auto dst_ip = wire::Ipv4Address::parse(opt.dst_ip);
  if (!dst_mac.ok() || !src_ip.ok() || !dst_ip.ok()) {
    std::cerr << "bad --dst-mac, --src-ip or --dst-ip\n";
    return kExitBadArgs;
  }
  h.endpoints.dst_mac = *dst_mac;
  h.endpoints.src_ip = *src_ip;
  h.endpoints.dst_ip = *dst_ip;
  h.bth.opcode = wire::Opcode::kWriteMiddle;
  h.bth.dest_qp = opt.dest_qp;

  std::vector<uint8_t> payload(opt.payload_bytes);
  v1::FrameCounters sent;
  const auto deadline = Clock::now() + std::chrono::milliseconds(opt.timeout_ms);
  uint32_t psn = 0;
  while (psn < opt.count) {
    const auto n = static_cast<uint16_t>(std::min<uint32_t>(kBurst, opt.count - psn));
    rte_mbuf* mbufs[kBurst];
    if (!port.alloc_burst(mbufs, n).ok()) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // buffers still in flight
      continue;
    }
    for (uint16_t i = 0; i < n; ++i) {
      h.bth.psn = psn + i;
      for (size_t j = 0; j < payload.size(); ++j) payload[j] = pattern_byte(psn + i, j);
      auto* data = rte_pktmbuf_mtod(mbufs[i], uint8_t*);
      auto len = wire::write_roce_frame({data, port.max_frame_size()}, h, payload);
      if (!len.ok()) {
        std::cerr << len.status().to_string() << "\n";
        return kExitFailure;
      }
      mbufs[i]->data_len = static_cast<uint16_t>(*len);
      mbufs[i]->pkt_len = *len;
      sent.set_bytes(sent.bytes() + *len);
    }
    uint16_t done = 0;
    while (done < n) {
      done += port.tx_burst(mbufs + done, n - done);
      if (Clock::now() > deadline) {
        std::cerr << "transmit queue stayed full until the timeout\n";
        return kExitFailure;
      }
    }
    psn += n;
    sent.set_frames(psn);
    sent.set_roce_frames(psn);
    // Paced bursts keep the receiver's ring and the veth backlog from overflowing, so the test's
    // counts can be exact.
    std::this_thread::sleep_for(std::chrono::microseconds(opt.burst_gap_us));
  }
  // Let the device drain its ring before the port closes.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  print_counters(sent);
  return 0;
}

void count_frame(const rte_mbuf* m, uint32_t& expected_psn, v1::FrameCounters& c) {
  const auto* data = rte_pktmbuf_mtod(m, const uint8_t*);
  c.set_frames(c.frames() + 1);
  c.set_bytes(c.bytes() + m->pkt_len);
  auto parsed = wire::parse_roce_frame({data, m->data_len});
  if (!parsed.ok()) {
    c.set_other_frames(c.other_frames() + 1);
    return;
  }
  c.set_roce_frames(c.roce_frames() + 1);
  if (!parsed->icrc_ok()) c.set_icrc_errors(c.icrc_errors() + 1);
  const uint32_t psn = parsed->headers.bth.psn;
  if (psn != expected_psn) c.set_psn_errors(c.psn_errors() + 1);
  expected_psn = psn + 1;
  for (size_t j = 0; j < parsed->payload.size(); ++j) {
    if (parsed->payload[j] != pattern_byte(psn, j)) {
      c.set_payload_errors(c.payload_errors() + 1);
      break;
    }
  }
}

int run_receiver(const Options& opt, dpdk::DpdkPort& port) {
  std::cout << "ready " << port.mac().to_string() << std::endl;
  v1::FrameCounters counters;
  uint32_t expected_psn = 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(opt.timeout_ms);
  Clock::time_point all_seen{};
  while (Clock::now() < deadline) {
    if (counters.roce_frames() >= opt.count) {
      if (all_seen == Clock::time_point{}) all_seen = Clock::now();
      // Keep listening a little: a duplicate or stray frame must show up in the counts.
      if (Clock::now() - all_seen > std::chrono::milliseconds(opt.linger_ms)) break;
    }
    rte_mbuf* mbufs[kBurst];
    const uint16_t n = port.rx_burst(mbufs, kBurst);
    for (uint16_t i = 0; i < n; ++i) {
      count_frame(mbufs[i], expected_psn, counters);
      rte_pktmbuf_free(mbufs[i]);
    }
    if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));  // idle: yield the core
  }
  if (auto stats = port.stats(); stats.ok() && stats->rx_missed > 0) {
    std::cerr << "receive ring overflowed: " << stats->rx_missed << " frames missed\n";
  }
  print_counters(counters);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"One end of collide's RoCEv2 smoke test (a test helper)"};
  Options opt;
  app.add_option("--role", opt.role, "send or receive")->required()
      ->check(CLI::IsMember({"send", "receive"}));
  app.add_option("--netns", opt.netns, "network namespace to run in (from `ip netns`)");
  app.add_option("--device", opt.device, "DPDK device, e.g. net_af_xdp0,iface=veth0")->required();
  app.add_option("--lcore", opt.lcore, "CPU core for the EAL's main thread");
  app.add_option("--count", opt.count, "frames to send or expect");
  app.add_option("--payload-bytes", opt.payload_bytes, "payload bytes per frame");
  app.add_option("--src-ip", opt.src_ip);
  app.add_option("--dst-ip", opt.dst_ip);
  app.add_option("--dst-mac", opt.dst_mac, "receiver's MAC (send)");
  app.add_option("--dest-qp", opt.dest_qp);
  app.add_option("--timeout-ms", opt.timeout_ms, "give up after this long");
  app.add_option("--linger-ms", opt.linger_ms, "receive: keep counting this long after the last");
  app.add_option("--burst-gap-us", opt.burst_gap_us, "send: pause between bursts of 32");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadArgs;
  }
  logging::set_level_from_env();

  // Enter the namespace before the EAL starts threads, so every thread lives there.
  if (!opt.netns.empty()) {
    if (Status s = netns::enter(opt.netns); !s.ok()) {
      std::cerr << s.to_string() << "\n";
      return kExitFailure;
    }
  }
  if (Status s = dpdk::init_eal(dpdk::virtual_device_eal_args(opt.lcore)); !s.ok()) {
    std::cerr << s.to_string() << "\n";
    return kExitNoDevice;
  }
  v1::DpdkPortConfig config;
  config.set_device(opt.device);
  config.set_rx_ring_size(4096);
  auto port = dpdk::DpdkPort::open(config);
  if (!port.ok()) {
    std::cerr << port.status().to_string() << "\n";
    return kExitNoDevice;
  }
  return opt.role == "send" ? run_sender(opt, **port) : run_receiver(opt, **port);
}
