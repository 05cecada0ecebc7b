// The replayer end to end: two hosts (namespaces) joined through a switch namespace (a bridge),
// each running `collide replay` on DPDK's net_af_xdp (or the kernel's AF_PACKET) for two of four
// ranks. A ring all-reduce must complete with every payload byte verified against its pattern.
#include <net/if.h>
#include <unistd.h>

#include <cmath>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <pcap/pcap.h>

#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"
#include "tests/support/bpf/roce_drop.h"
#include "replayer/wire/roce_frame.h"
#include "tests/support/bridged_hosts.h"
#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"
#include "traces/trace_io.h"

namespace collide {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::TestNetns;

constexpr uint64_t kBytes = uint64_t{1} << 30;
#ifdef COLLIDE_HAVE_DPDK
constexpr bool kHaveDpdk = true;
#else
constexpr bool kHaveDpdk = false;  // only the kernel backend's tests run
#endif

std::string write_all_reduce_trace(const std::filesystem::path& dir, uint64_t bytes) {
  const std::string path = (dir / "allreduce.trace").string();
  v1::TraceHeader h;
  h.set_world_size(4);
  auto* comm = h.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < 4; ++r) comm->add_ranks(r);
  auto writer = traces::TraceWriter::create(path, h);
  EXPECT_TRUE(writer.ok());
  for (uint32_t r = 0; r < 4; ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(v1::OP_KIND_ALL_REDUCE);
    op.set_comm("world");
    op.set_datatype(v1::DATA_TYPE_BFLOAT16);
    op.set_count(bytes / 2);
    op.set_bytes(bytes);
    op.set_root(-1);
    EXPECT_TRUE((*writer)->write(op).ok());
  }
  EXPECT_TRUE((*writer)->close().ok());
  return path;
}

struct ReplayCase {
  std::string recovery;
  double loss;  // on the fabric port towards host B (host B's receive side)
};

void PrintTo(const ReplayCase& c, std::ostream* os) { *os << c.recovery << ", loss " << c.loss; }

// Two hosts and a fabric namespace, and a way to start `collide replay` on each host.
class ReplayTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_netns());
    COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
    dir_ = std::filesystem::temp_directory_path() / ("collide-replay-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    auto bed = testing::BridgedHosts::create("rp");
    ASSERT_TRUE(bed.ok()) << bed.status().to_string();
    bed_ = std::move(bed).value();
  }
  // COLLIDE_KEEP_TEST_FILES=1 keeps traces, results and captures for a look afterwards.
  void TearDown() override {
    if (getenv("COLLIDE_KEEP_TEST_FILES") == nullptr) std::filesystem::remove_all(dir_);
  }

  // Starts one host's replay; it prints "ready" once its port is up, then waits for `go`.
  ChildProcess start_host(const TestNetns& ns, const std::string& iface, const std::string& ranks,
                          int lcore, const std::string& peer_host_mac, int peer_host,
                          const std::string& results, const std::string& recovery,
                          const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
         COLLIDE_BIN, "replay", trace_, "--ranks=" + ranks, "--ranks-per-host=2",
         backend_ == "afpacket" ? "--port=afpacket:" + iface
                                : "--port=dpdk:net_af_xdp" + std::to_string(lcore) + ",iface=" + iface,
         "--netns=" + ns.name(), "--lcore=" + std::to_string(lcore), "--mtu=1024",
         "--recovery=" + recovery, "--timeout-exponent=14", "--slice-bytes=1048576",
         "--host-mac=" + std::to_string(peer_host) + "=" + peer_host_mac,
         "--results=" + results, "--wait-for-file=" + (dir_ / "go").string(), "--timeout=300",
         // Bounding what is in flight keeps the fabric namespace's backlog from overflowing
         // when two busy-polling processes and its softirq share two cores.
         "--max-outstanding=256"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto child = ChildProcess::spawn(argv);
    EXPECT_TRUE(child.ok()) << child.status().to_string();
    return std::move(child).value();
  }

  // Starts both hosts, waits until both ports are up, says go, waits for both to finish.
  void run_both(const std::string& recovery, const std::string& results_a,
                const std::string& results_b, double& seconds,
                const std::vector<std::string>& extra_a = {}) {
    ChildProcess a = start_host(*bed_.host_a, "a0", "0,1", 0, bed_.mac_b, 1, results_a, recovery,
                                extra_a);
    ChildProcess b = start_host(*bed_.host_b, "b0", "2,3", 1, bed_.mac_a, 0, results_b, recovery);
    for (ChildProcess* c : {&a, &b}) {
      auto line = c->read_line(60s);
      ASSERT_TRUE(line.ok()) << "replay did not start: " << line.status().to_string();
      ASSERT_EQ(line->rfind("ready", 0), 0u) << *line;
    }
    const auto started = std::chrono::steady_clock::now();
    std::ofstream(dir_ / "go").close();
    auto code_a = a.wait(400s);
    auto code_b = b.wait(400s);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ASSERT_TRUE(code_a.ok() && code_b.ok());
    EXPECT_EQ(*code_a, 0);
    EXPECT_EQ(*code_b, 0);
  }

  std::filesystem::path dir_;
  testing::BridgedHosts bed_;
  std::string trace_;
  std::string backend_ = "af_xdp";  // or "afpacket": the kernel's AF_PACKET socket, no DPDK
};

class ReplayVethTest : public ReplayTestbed, public ::testing::WithParamInterface<ReplayCase> {};

TEST_P(ReplayVethTest, OneGibAllReduceOverDpdkAfXdpIsByteExact) {
  if (!kHaveDpdk) GTEST_SKIP() << "built without DPDK (-DCOLLIDE_WITH_DPDK=OFF)";
  const ReplayCase& param = GetParam();
  if (param.loss > 0) COLLIDE_REQUIRE(testing::missing_bpf());
  trace_ = write_all_reduce_trace(dir_, kBytes);
  // Loss on the fabric's port towards host B: every frame host B receives passes it.
  std::unique_ptr<testing::RoceDrop> drop;
  if (param.loss > 0) {
    auto loaded = testing::RoceDrop::load(param.loss, 7);
    ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
    drop = std::move(loaded).value();
    auto scope = testing::NetnsScope::enter(bed_.fabric->name());
    ASSERT_TRUE(scope.ok());
    ASSERT_TRUE(drop->attach(static_cast<int>(if_nametoindex("fb")), injectors::Direction::kEgress).ok());
  }
  const std::string results_a = (dir_ / "a.json").string();
  const std::string results_b = (dir_ / "b.json").string();
  double seconds = 0;
  run_both(param.recovery, results_a, results_b, seconds);
  if (::testing::Test::HasFatalFailure()) return;

  uint64_t received = 0;
  std::vector<nlohmann::json> counters;
  for (const std::string& path : {results_a, results_b}) {
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "no results at " << path;
    const auto r = nlohmann::json::parse(in);
    EXPECT_TRUE(r["ok"].get<bool>()) << r["failure"];
    ASSERT_EQ(r["ops"].size(), 2u);
    for (const auto& op : r["ops"]) EXPECT_FALSE(op["failed"].get<bool>());
    const auto& c = r["counters"];
    EXPECT_EQ(c["pattern_errors"].get<uint64_t>(), 0u);
    EXPECT_EQ(c["icrc_errors"].get<uint64_t>(), 0u);
    received += c["payload_bytes_received"].get<uint64_t>();
    counters.push_back(c);
    std::cout << path << ": " << c.dump() << " port " << r["port_counters"].dump() << "\n";
  }
  // Ring over 4 ranks on 2 hosts: per channel, 2 of the 4 ring edges cross hosts, and each
  // crossing rank sends 2(n-1)/n of its share: 2 x 1.5 x 1 GiB in all, every byte received once.
  EXPECT_EQ(received, 3 * kBytes);
  ASSERT_EQ(counters.size(), 2u);

  // Every lost data packet A sent to B was sent again: each resend made up for a loss or for a
  // copy B already had (a duplicate; with go-back-N also the packets B discarded after a gap).
  const auto& sender = counters[0];
  const auto& receiver = counters[1];
  const uint64_t lost =
      sender["packets_sent"].get<uint64_t>() - receiver["packets_received"].get<uint64_t>();
  uint64_t resends_explained = lost + receiver["duplicates"].get<uint64_t>();
  if (param.recovery == "go-back-n") resends_explained += receiver["out_of_order"].get<uint64_t>();
  EXPECT_EQ(sender["retransmitted_packets"].get<uint64_t>(), resends_explained);
  if (drop) {
    auto dropped = drop->counts();
    ASSERT_TRUE(dropped.ok());
    // 1% of what crossed the port, within 3 sigma; all of it was lost and resent.
    const double expected = param.loss * static_cast<double>(dropped->matched);
    EXPECT_NEAR(static_cast<double>(dropped->dropped), expected, 3 * std::sqrt(expected));
    EXPECT_GE(lost, dropped->dropped);
    std::cout << "injected drops " << dropped->dropped << " of " << dropped->matched
              << "; lost A->B " << lost << " (" << lost - dropped->dropped << " by the veth fabric "
              << "itself); A resent " << sender["retransmitted_packets"] << "\n";
  }
  std::cout << "1 GiB all-reduce (" << param.recovery << ", loss " << param.loss << ") took "
            << seconds << " s, " << 3.0 * kBytes * 8 / seconds / 1e9
            << " Gb/s of cross-host payload\n";
}

class ReplayLosslessTest : public ReplayTestbed {};

// `collide replay --lossless` over DPDK net_af_xdp: host A stops draining its port for 300 ms in
// the middle of an all-reduce, takes what arrives into its hold, and sends pause frames out of
// its port (a pause, its refreshes, then one resume). The bridge between the hosts does not
// forward the reserved MAC control address, so B is never paused and A's ring may overflow; the
// job still completes byte-exact through recovery.
TEST_F(ReplayLosslessTest, ASlowReceiverSendsPauseFramesOutOfItsPort) {
  if (!kHaveDpdk) GTEST_SKIP() << "built without DPDK (-DCOLLIDE_WITH_DPDK=OFF)";
  constexpr uint64_t bytes = 64 << 20;
  trace_ = write_all_reduce_trace(dir_, bytes);
  const std::string results_a = (dir_ / "a.json").string();
  const std::string results_b = (dir_ / "b.json").string();
  double seconds = 0;
  run_both("go-back-n", results_a, results_b, seconds, {"--drain-pause=50ms:300ms", "--lossless"});
  if (::testing::Test::HasFatalFailure()) return;
  // Each host's counters, from a replay that finished well.
  std::vector<nlohmann::json> counters;
  for (const std::string& path : {results_a, results_b}) {
    std::ifstream in(path);
    const auto r = in.good() ? nlohmann::json::parse(in) : nlohmann::json{{"ok", false}};
    ASSERT_TRUE(r["ok"].get<bool>()) << path << ": " << r.dump();
    counters.push_back(r["counters"]);
    std::cout << path << ": " << counters.back().dump() << "\n";
  }
  EXPECT_EQ(counters[0]["payload_bytes_received"].get<uint64_t>() +
                counters[1]["payload_bytes_received"].get<uint64_t>(),
            3 * bytes);
  // At 100 Gb/s (no pacing) 65535 quanta last 335 us: refreshed every 168 us for 300 ms.
  EXPECT_GT(counters[0]["rx_held_frames"].get<uint64_t>(), 0u);
  EXPECT_GT(counters[0]["pause_frames_sent"].get<uint64_t>(), 100u);
  EXPECT_EQ(counters[1]["pause_frames_sent"].get<uint64_t>(), 0u);
  EXPECT_EQ(counters[1]["pause_frames"].get<uint64_t>(), 0u);  // the bridge kept them
  std::cout << "took " << seconds << " s\n";
}

class ReplayCaptureTest : public ReplayTestbed {};

// What goes over the fabric is RoCEv2 as tools know it: tshark dissects every captured frame as
// InfiniBand over UDP 4791 (RDMA WRITEs and ACKNOWLEDGEs) with the DSCP switches queue RoCE by,
// and every frame's ICRC (which this tshark shows but does not check) matches a CRC recomputed
// from the captured bytes.
TEST_F(ReplayCaptureTest, TsharkDecodesTheTrafficAsRoceWithValidIcrc) {
  if (!kHaveDpdk) GTEST_SKIP() << "built without DPDK (-DCOLLIDE_WITH_DPDK=OFF)";
  COLLIDE_REQUIRE(testing::missing_tool("tshark"));
  trace_ = write_all_reduce_trace(dir_, 4 << 20);
  const std::string pcap = (dir_ / "fabric.pcap").string();
  auto capture = ChildProcess::spawn({"ip", "netns", "exec", bed_.fabric->name(), "tshark", "-q",
                                      "-i", "fa", "-w", pcap, "-f", "udp port 4791", "-a",
                                      "duration:30", "-c", "3000"});
  ASSERT_TRUE(capture.ok());
  // dumpcap announces nothing on stdout, but writes the file's header once it has the interface
  // open: the replay starts after that. (A fixed wait was once too short on a busy machine: the
  // replay was over before the capture began, and nothing was captured.)
  const auto capturing = [&pcap] {
    std::error_code ec;
    const auto size = std::filesystem::file_size(pcap, ec);
    return !ec && size > 0;
  };
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (!capturing() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(capturing()) << "tshark did not start capturing within 30 s";
  double seconds = 0;
  run_both("selective-repeat", (dir_ / "a.json").string(), (dir_ / "b.json").string(), seconds);
  auto captured = capture->wait(60s);
  ASSERT_TRUE(captured.ok());

  // Only tshark's standard output: as root it warns on stderr.
  auto fields = testing::run_command(
      {"sh", "-c", "tshark -r '" + pcap + "' -T fields -E separator=, -e frame.protocols "
                   "-e infiniband.bth.opcode -e infiniband.invariant.crc -e ip.dsfield.dscp 2>/dev/null"});
  ASSERT_TRUE(fields.ok());
  ASSERT_EQ(fields->exit_code, 0) << fields->output;
  std::vector<uint32_t> tshark_icrc;
  std::map<int, int> opcodes;
  std::istringstream lines(fields->output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cols(line);
    std::string protocols, opcode, icrc, dscp;
    std::getline(cols, protocols, ',');
    std::getline(cols, opcode, ',');
    std::getline(cols, icrc, ',');
    std::getline(cols, dscp, ',');
    EXPECT_NE(protocols.find("udp:infiniband"), std::string::npos) << line;
    // RoCE's usual class (NCCL_IB_TC 106), on data frames and acknowledgements alike.
    EXPECT_EQ(dscp, "26") << line;
    if (opcode.empty() || icrc.empty()) {
      ADD_FAILURE() << "tshark did not decode a BTH and ICRC: " << line;
      break;
    }
    auto op = parse_number<int>(opcode, "tshark opcode");
    auto crc = parse_number<uint32_t>(icrc, "tshark ICRC", 16);
    if (!op.ok() || !crc.ok()) {
      ADD_FAILURE() << op.status().message() << crc.status().message() << ": " << line;
      break;
    }
    opcodes[*op]++;
    tshark_icrc.push_back(*crc);
  }
  ASSERT_GE(tshark_icrc.size(), 1000u);
  EXPECT_GT(opcodes[0x06] + opcodes[0x07] + opcodes[0x08] + opcodes[0x0a], 0) << "RDMA WRITEs";
  EXPECT_GT(opcodes[0x11], 0) << "ACKNOWLEDGEs";

  // The same frames read with libpcap: tshark's ICRC is the last four bytes as the wire has
  // them, and it must be the CRC of the frame.
  char errbuf[PCAP_ERRBUF_SIZE];
  pcap_t* handle = pcap_open_offline(pcap.c_str(), errbuf);
  ASSERT_NE(handle, nullptr) << errbuf;
  size_t index = 0;
  pcap_pkthdr* header;
  const u_char* bytes;
  while (pcap_next_ex(handle, &header, &bytes) == 1 && index < tshark_icrc.size()) {
    auto parsed = replayer::wire::parse_roce_frame({bytes, header->caplen});
    ASSERT_TRUE(parsed.ok()) << "frame " << index << ": " << parsed.status().to_string();
    EXPECT_TRUE(parsed->icrc_ok()) << "frame " << index;
    EXPECT_EQ(tshark_icrc[index], __builtin_bswap32(parsed->icrc_on_wire)) << "frame " << index;
    ++index;
  }
  pcap_close(handle);
  EXPECT_EQ(index, tshark_icrc.size());
  std::cout << "tshark decoded " << index << " RoCEv2 frames; opcodes:";
  for (const auto& [op, n] : opcodes) std::cout << " 0x" << std::hex << op << std::dec << "=" << n;
  std::cout << "\n";
}

class ReplayAfPacketTest : public ReplayTestbed {};

// The kernel backend: the same replay with `--port afpacket:<iface>` on both hosts (no DPDK),
// every byte verified, nothing resent on a clean fabric beyond what the veths themselves lost.
TEST_F(ReplayAfPacketTest, AllReduceOverAfPacketIsByteExact) {
  backend_ = "afpacket";
  constexpr uint64_t kAfPacketBytes = 256ull << 20;
  trace_ = write_all_reduce_trace(dir_, kAfPacketBytes);
  const std::string results_a = (dir_ / "a.json").string();
  const std::string results_b = (dir_ / "b.json").string();
  double seconds = 0;
  run_both("selective-repeat", results_a, results_b, seconds);
  if (::testing::Test::HasFatalFailure()) return;
  uint64_t received = 0;
  for (const std::string& path : {results_a, results_b}) {
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "no results at " << path;
    const auto r = nlohmann::json::parse(in);
    EXPECT_TRUE(r["ok"].get<bool>()) << r["failure"];
    EXPECT_NE(r["port"].get<std::string>().find("af_packet"), std::string::npos) << r["port"];
    ASSERT_EQ(r["ops"].size(), 2u);
    for (const auto& op : r["ops"]) EXPECT_FALSE(op["failed"].get<bool>());
    const auto& c = r["counters"];
    EXPECT_EQ(c["pattern_errors"].get<uint64_t>(), 0u);
    EXPECT_EQ(c["icrc_errors"].get<uint64_t>(), 0u);
    EXPECT_GT(c["packets_received"].get<uint64_t>(), 0u);
    received += c["payload_bytes_received"].get<uint64_t>();
    std::cout << path << ": " << c.dump() << " port " << r["port_counters"].dump() << "\n";
  }
  EXPECT_EQ(received, 3 * kAfPacketBytes);
  std::cout << "256 MiB all-reduce over afpacket took " << seconds << " s, "
            << 3.0 * kAfPacketBytes * 8 / seconds / 1e9 << " Gb/s of cross-host payload\n";
}

// `collide replay --pcap`: host A records what its port sent and received, up to the limit, with
// nanosecond timestamps; tshark dissects every record as InfiniBand over UDP 4791, both A's RDMA
// WRITEs and B's ACKs, and every ICRC in the file checks out.
TEST_F(ReplayCaptureTest, PcapOptionRecordsBothDirectionsAsRoce) {
  COLLIDE_REQUIRE(testing::missing_tool("tshark"));
  backend_ = "afpacket";
  trace_ = write_all_reduce_trace(dir_, 16 << 20);
  const std::string pcap = (dir_ / "host-a.pcap").string();
  const std::string results_a = (dir_ / "a.json").string();
  double seconds = 0;
  run_both("selective-repeat", results_a, (dir_ / "b.json").string(), seconds,
           {"--pcap=" + pcap, "--pcap-max-packets=5000"});
  if (::testing::Test::HasFatalFailure()) return;
  std::ifstream in(results_a);
  const auto r = nlohmann::json::parse(in);
  EXPECT_EQ(r["pcap"]["captured"].get<uint64_t>(), 5000u);
  EXPECT_GT(r["pcap"]["not_captured"].get<uint64_t>(), 0u);

  // Nanosecond pcap: the magic number says so.
  std::ifstream file(pcap, std::ios::binary);
  uint32_t magic = 0;
  file.read(reinterpret_cast<char*>(&magic), sizeof magic);
  EXPECT_EQ(magic, 0xa1b23c4du);

  auto fields = testing::run_command(
      {"sh", "-c", "tshark -r '" + pcap + "' -T fields -E separator=, -e frame.protocols "
                   "-e infiniband.bth.opcode -e eth.src 2>/dev/null"});
  ASSERT_TRUE(fields.ok());
  ASSERT_EQ(fields->exit_code, 0) << fields->output;
  std::map<int, int> opcodes;
  std::map<std::string, int> sources;
  size_t lines_read = 0;
  std::istringstream lines(fields->output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cols(line);
    std::string protocols, opcode, src;
    std::getline(cols, protocols, ',');
    std::getline(cols, opcode, ',');
    std::getline(cols, src, ',');
    ++lines_read;
    EXPECT_NE(protocols.find("udp:infiniband"), std::string::npos) << line;
    if (opcode.empty()) {
      ADD_FAILURE() << "tshark did not decode a BTH: " << line;
      break;
    }
    auto op = parse_number<int>(opcode, "tshark opcode");
    if (!op.ok()) {
      ADD_FAILURE() << op.status().message() << ": " << line;
      break;
    }
    opcodes[*op]++;
    sources[src]++;
  }
  EXPECT_EQ(lines_read, 5000u);
  EXPECT_GT(opcodes[0x06] + opcodes[0x07] + opcodes[0x08] + opcodes[0x0a], 0) << "RDMA WRITEs";
  EXPECT_GT(opcodes[0x11], 0) << "ACKNOWLEDGEs";
  EXPECT_GT(sources[bed_.mac_a], 0) << "frames A sent";
  EXPECT_GT(sources[bed_.mac_b], 0) << "frames A received";

  char errbuf[PCAP_ERRBUF_SIZE];
  pcap_t* handle = pcap_open_offline_with_tstamp_precision(pcap.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  ASSERT_NE(handle, nullptr) << errbuf;
  pcap_pkthdr* header;
  const u_char* bytes;
  size_t index = 0;
  bool any_sub_microsecond = false;
  while (pcap_next_ex(handle, &header, &bytes) == 1) {
    auto parsed = replayer::wire::parse_roce_frame({bytes, header->caplen});
    ASSERT_TRUE(parsed.ok()) << "frame " << index << ": " << parsed.status().to_string();
    EXPECT_TRUE(parsed->icrc_ok()) << "frame " << index;
    any_sub_microsecond = any_sub_microsecond || header->ts.tv_usec % 1000 != 0;
    ++index;
  }
  pcap_close(handle);
  EXPECT_EQ(index, 5000u);
  EXPECT_TRUE(any_sub_microsecond) << "timestamps carry nanoseconds";
  std::cout << "host A's pcap: " << index << " frames, opcodes:";
  for (const auto& [op, n] : opcodes) std::cout << " 0x" << std::hex << op << std::dec << "=" << n;
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(Recoveries, ReplayVethTest,
                         ::testing::Values(ReplayCase{"go-back-n", 0}, ReplayCase{"selective-repeat", 0},
                                           ReplayCase{"go-back-n", 0.01},
                                           ReplayCase{"selective-repeat", 0.01}),
                         [](const auto& info) {
                           return std::string(info.param.recovery == "go-back-n" ? "GoBackN"
                                                                                 : "SelectiveRepeat") +
                                  (info.param.loss > 0 ? "OnePercentLoss" : "Lossless");
                         });

}  // namespace
}  // namespace collide
