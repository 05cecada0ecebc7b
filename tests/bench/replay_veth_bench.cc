// The replayer's data plane between two namespaces, against peers measured in the same run.
//
// Testbed: host A (a0) and host B (b0), each a namespace, joined through a third namespace that
// bridges their veths (fa, fb), as replay_veth_test builds it. Offloads off: one skb per frame.
//
// (b) goodput of a two-rank transfer A -> B (`collide replay`, net_af_xdp on both hosts, payload
//     verification off) against the I/O ceiling, dpdk-testpmd --forward-mode=txonly on net_af_xdp
//     on a0 with the same frame size, and against iperf3 UDP (-b 0, the same payload) between the
//     namespaces; the same transfer over the kernel backend (afpacket:) too.
// (c) goodput of that transfer against random loss of data packets, injected by the RoCE dropper
//     on the fabric's port towards B (the receiver's ingress from the fabric), for go-back-N and
//     selective repeat: a table, an ASCII chart and, with gnuplot, a PNG.
//
// Every child runs under a time limit; the namespaces go when the program ends. Needs root.
// Usage: replayer_veth_bench [--quick] [--png FILE] [--no-loss-curve] [--max-outstanding N]
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"
#include "tests/support/bpf/roce_drop.h"
#include "tests/support/bridged_hosts.h"
#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "traces/trace_io.h"

namespace collide {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::TestNetns;

constexpr uint32_t kPayload = 1024;  // RoCE MTU; veth MTU 1500
// A RoCE WRITE MIDDLE frame of kPayload: Ethernet, IPv4, UDP, BTH, payload, ICRC.
constexpr uint32_t kFrameBytes = 14 + 20 + 8 + 12 + kPayload + 4;

struct Options {
  bool quick = false;
  bool loss_curve = true;
  uint32_t max_outstanding = 256;
  std::string png;
};

// The shared two-host testbed and a scratch folder for traces and results.
struct Bed : testing::BridgedHosts {
  std::filesystem::path dir;
};

// Rank 0 (host A) sends `bytes` to rank 1 (host B).
Status write_transfer_trace(const std::string& path, uint64_t bytes) {
  v1::TraceHeader h;
  h.set_world_size(2);
  auto* comm = h.add_communicators();
  comm->set_id("world");
  comm->add_ranks(0);
  comm->add_ranks(1);
  auto writer = traces::TraceWriter::create(path, h);
  if (!writer.ok()) return writer.status();
  for (uint32_t r = 0; r < 2; ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(r == 0 ? v1::OP_KIND_SEND : v1::OP_KIND_RECV);
    op.set_comm("world");
    op.set_datatype(v1::DATA_TYPE_INT8);
    op.set_count(bytes);
    op.set_bytes(bytes);
    op.set_root(static_cast<int32_t>(1 - r));
    COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
  }
  return (*writer)->close();
}

struct TransferResult {
  bool ok = false;
  double seconds = 0;       // B's replay, from go to its last byte (or to the time limit)
  uint64_t received = 0;    // payload bytes B accepted
  uint64_t retransmitted = 0;
  uint64_t timeouts = 0;
  double goodput_gbps() const { return seconds > 0 ? received * 8.0 / seconds / 1e9 : 0; }
};

// One transfer A -> B with `collide replay` on both hosts.
TransferResult run_transfer(const Bed& bed, const std::string& trace, const std::string& backend,
                            const std::string& recovery, double time_limit_s,
                            uint32_t max_outstanding) {
  TransferResult out;
  const std::string go = (bed.dir / "go").string();
  std::filesystem::remove(go);
  auto start = [&](const TestNetns& ns, const std::string& iface, uint32_t rank, int lcore,
                   const std::string& peer_mac, const std::string& results) {
    const std::string port = backend == "afpacket"
                                 ? "afpacket:" + iface
                                 : fmt::format("dpdk:net_af_xdp{},iface={}", lcore, iface);
    // Their summaries and logs go to a file beside the results, not into the tables.
    const std::string log = (bed.dir / "replay.log").string();
    return ChildProcess::spawn(
        {"sh", "-c", "exec \"$@\" 2>>" + log, "sh", COLLIDE_BIN, "replay", trace, "--ranks=" + std::to_string(rank), "--ranks-per-host=1",
         "--port=" + port, "--netns=" + ns.name(), "--lcore=" + std::to_string(lcore),
         fmt::format("--mtu={}", kPayload), "--recovery=" + recovery, "--no-verify",
         "--channels=1", "--timeout-exponent=14",
         fmt::format("--max-outstanding={}", max_outstanding),
         "--slice-bytes=1048576", "--host-mac=" + std::to_string(1 - rank) + "=" + peer_mac,
         "--results=" + results, "--wait-for-file=" + go,
         fmt::format("--timeout={}", time_limit_s)});
  };
  const std::string results_a = (bed.dir / "a.json").string();
  const std::string results_b = (bed.dir / "b.json").string();
  std::filesystem::remove(results_a);
  std::filesystem::remove(results_b);
  auto a = start(*bed.host_a, "a0", 0, 0, bed.mac_b, results_a);
  auto b = start(*bed.host_b, "b0", 1, 1, bed.mac_a, results_b);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "cannot start collide replay\n");
    return out;
  }
  for (ChildProcess* c : {&*a, &*b}) {
    auto line = c->read_line(60s);
    if (!line.ok() || line->rfind("ready", 0) != 0) {
      std::fprintf(stderr, "collide replay did not start: %s\n",
                   line.ok() ? line->c_str() : line.status().to_string().c_str());
      return out;
    }
  }
  std::ofstream(go).close();
  const auto limit = std::chrono::milliseconds(static_cast<int64_t>(time_limit_s * 1000) + 30'000);
  (void)b->wait(limit);
  (void)a->wait(limit);
  std::ifstream in(results_b);
  if (!in.good()) {
    std::fprintf(stderr, "no results from host B\n");
    return out;
  }
  const auto r = nlohmann::json::parse(in, nullptr, false);
  if (r.is_discarded()) return out;
  out.ok = r["ok"].get<bool>();
  out.seconds = r["wall_seconds"].get<double>();
  out.received = r["counters"]["payload_bytes_received"].get<uint64_t>();
  std::ifstream in_a(results_a);
  const auto ra = nlohmann::json::parse(in_a, nullptr, false);
  if (!ra.is_discarded()) {
    out.retransmitted = ra["counters"]["retransmitted_packets"].get<uint64_t>();
    out.timeouts = ra["counters"]["timeouts"].get<uint64_t>();
  }
  return out;
}

// dpdk-testpmd's txonly engine on net_af_xdp on a0, frames of kFrameBytes to B's MAC: the mean of
// its per-second Tx-pps reports, the first (start-up) one left out.
double testpmd_txonly_pps(const Bed& bed, double seconds) {
  auto child = ChildProcess::spawn(
      {"sh", "-c", "exec \"$@\" 2>/dev/null", "sh",
       "ip", "netns", "exec", bed.host_a->name(), "timeout", "-s", "INT", fmt::format("{}", seconds + 3),
       "dpdk-testpmd", "--no-pci", "--no-huge", "--no-shconf", "--no-telemetry", "-m", "512",
       "--vdev", "net_af_xdp0,iface=a0", "-l", "0-1", "--log-level=error", "--",
       "--forward-mode=txonly", "--stats-period", "1", "--total-num-mbufs=16384",
       fmt::format("--txpkts={}", kFrameBytes), "--eth-peer=0," + bed.mac_b, "--no-mlockall"});
  if (!child.ok()) return 0;
  (void)child->wait(std::chrono::milliseconds(static_cast<int64_t>((seconds + 15) * 1000)));
  const std::string out = child->remaining_output();
  static const std::regex kTxPps("Tx-pps:\\s+([0-9]+)");
  std::vector<double> pps;
  for (std::sregex_iterator it(out.begin(), out.end(), kTxPps), e; it != e; ++it) {
    auto v = parse_number<double>((*it).str(1), "testpmd Tx-pps");
    if (!v.ok()) return 0;
    pps.push_back(*v);
  }
  // testpmd prints a last summary; per-second lines come first.
  if (pps.size() > 2) pps.erase(pps.begin());
  if (pps.empty()) {
    std::fprintf(stderr, "testpmd printed no Tx-pps:\n%s\n", out.c_str());
    return 0;
  }
  double sum = 0;
  for (double v : pps) sum += v;
  return sum / static_cast<double>(pps.size());
}

// iperf3 UDP at full speed (-b 0) with the same payload, A -> B: what the receiver got.
double iperf3_udp_gbps(const Bed& bed, double seconds) {
  auto server = ChildProcess::spawn({"ip", "netns", "exec", bed.host_b->name(), "timeout",
                                     fmt::format("{}", seconds + 20), "iperf3", "-s", "-1", "-B",
                                     "198.18.0.2"});
  if (!server.ok()) return 0;
  std::this_thread::sleep_for(500ms);
  auto client = testing::run_command(
      {"ip", "netns", "exec", bed.host_a->name(), "timeout", fmt::format("{}", seconds + 15), "iperf3",
       "-c", "198.18.0.2", "-u", "-b", "0", "-l", std::to_string(kPayload), "-t",
       fmt::format("{}", seconds), "-J"});
  (void)server->wait(20s);
  if (!client.ok() || client->exit_code != 0) {
    std::fprintf(stderr, "iperf3 failed: %s\n", client.ok() ? client->output.c_str() : "");
    return 0;
  }
  const auto j = nlohmann::json::parse(client->output, nullptr, false);
  if (j.is_discarded()) return 0;
  // 3.12 reports the receiver's side of a UDP test as the lost share of what was sent.
  const auto& sum = j["end"]["sum"];
  const double sent_bps = sum.value("bits_per_second", 0.0);
  const double lost = sum.value("lost_percent", 0.0);
  return sent_bps * (1 - lost / 100) / 1e9;
}

std::string loss_name(double loss) {
  if (loss == 0) return "0";
  if (loss < 0.001) return "0_01pct";
  if (loss < 0.01) return "0_1pct";
  if (loss < 0.05) return "1pct";
  return "5pct";
}

void write_png(const std::string& png, const std::filesystem::path& dir,
               const std::vector<double>& losses, const std::vector<double>& gbn,
               const std::vector<double>& sr) {
  if (!testing::run_command({"sh", "-c", "command -v gnuplot"}).ok() ||
      testing::run_command({"sh", "-c", "command -v gnuplot"})->exit_code != 0) {
    std::printf("gnuplot not installed: no PNG\n");
    return;
  }
  const auto data = dir / "curve.dat";
  {
    std::ofstream d(data);
    for (size_t i = 0; i < losses.size(); ++i) {
      d << fmt::format("\"{}%\" {} {}\n", losses[i] * 100, gbn[i], sr[i]);
    }
  }
  const auto script = dir / "curve.gp";
  {
    std::ofstream g(script);
    g << "set terminal pngcairo size 800,480 noenhanced\n"
      << "set output '" << png << "'\n"
      << "set title 'collide replay over a veth (net_af_xdp): goodput against data loss'\n"
      << "set ylabel 'goodput (Gb/s)'\nset xlabel 'loss of data packets'\n"
      << "set style data histograms\nset style fill solid 0.8\nset yrange [0:*]\nset grid y\n"
      << "plot '" << data.string() << "' using 2:xtic(1) title 'go-back-N', '' using 3 title "
      << "'selective repeat'\n";
  }
  auto r = testing::run_command({"gnuplot", script.string()});
  if (r.ok() && r->exit_code == 0) {
    std::printf("chart written to %s\n", png.c_str());
  } else {
    std::printf("gnuplot failed: %s\n", r.ok() ? r->output.c_str() : "");
  }
}

int run(const Options& opt) {
  Bed bed;
  bed.dir = std::filesystem::temp_directory_path() / fmt::format("collide-veth-bench-{}", getpid());
  std::filesystem::create_directories(bed.dir);
  auto hosts = testing::BridgedHosts::create("rvb");
  if (!hosts.ok()) {
    std::fprintf(stderr, "testbed: %s\n", hosts.status().to_string().c_str());
    return 1;
  }
  static_cast<testing::BridgedHosts&>(bed) = std::move(hosts).value();
  const uint64_t big = opt.quick ? (64ull << 20) : (512ull << 20);
  const uint64_t small = opt.quick ? (16ull << 20) : (64ull << 20);
  const std::string big_trace = (bed.dir / "big.trace").string();
  const std::string small_trace = (bed.dir / "small.trace").string();
  if (!write_transfer_trace(big_trace, big).ok() || !write_transfer_trace(small_trace, small).ok()) {
    std::fprintf(stderr, "cannot write traces\n");
    return 1;
  }
  const double peer_seconds = opt.quick ? 3 : 5;

  // (b) goodput and its ceilings.
  std::printf("== goodput A -> B over veth + bridge, %u B payload (%u B frames) ==\n", kPayload, kFrameBytes);
  std::fflush(stdout);
  const TransferResult xdp = run_transfer(bed, big_trace, "af_xdp", "selective-repeat", 120, opt.max_outstanding);
  std::printf("collide replay, net_af_xdp: %.3f Gb/s (%s, %llu B in %.3f s, %llu resent)\n",
              xdp.goodput_gbps(), xdp.ok ? "ok" : "FAILED",
              static_cast<unsigned long long>(xdp.received), xdp.seconds,
              static_cast<unsigned long long>(xdp.retransmitted));
  std::fflush(stdout);
  const TransferResult afp = run_transfer(bed, big_trace, "afpacket", "selective-repeat", 120, opt.max_outstanding);
  std::printf("collide replay, afpacket:   %.3f Gb/s (%s, %llu B in %.3f s, %llu resent)\n",
              afp.goodput_gbps(), afp.ok ? "ok" : "FAILED",
              static_cast<unsigned long long>(afp.received), afp.seconds,
              static_cast<unsigned long long>(afp.retransmitted));
  std::fflush(stdout);
  const double pps = testpmd_txonly_pps(bed, peer_seconds);
  const double ceiling = pps * kPayload * 8 / 1e9;
  std::printf("dpdk-testpmd txonly, net_af_xdp: %.0f pps = %.3f Gb/s of %u B payloads\n", pps,
              ceiling, kPayload);
  std::fflush(stdout);
  const double iperf = iperf3_udp_gbps(bed, peer_seconds);
  std::printf("iperf3 UDP -b 0 -l %u: %.3f Gb/s received\n", kPayload, iperf);
  std::fflush(stdout);

  std::printf("figure veth_goodput_afxdp %.3f Gb/s\n", xdp.goodput_gbps());
  std::printf("figure veth_goodput_afpacket %.3f Gb/s\n", afp.goodput_gbps());
  if (ceiling > 0) {
    std::printf("figure veth_goodput_vs_testpmd_txonly %.3f x\n", xdp.goodput_gbps() / ceiling);
    std::printf("figure veth_goodput_afpacket_vs_testpmd_txonly %.3f x\n", afp.goodput_gbps() / ceiling);
  }
  if (iperf > 0) {
    std::printf("figure veth_goodput_vs_iperf3_udp %.3f x\n", xdp.goodput_gbps() / iperf);
    std::printf("figure veth_goodput_afpacket_vs_iperf3_udp %.3f x\n", afp.goodput_gbps() / iperf);
  }
  std::fflush(stdout);
  if (!opt.loss_curve) {
    std::filesystem::remove_all(bed.dir);
    return 0;
  }

  // (c) goodput against loss.
  const std::vector<double> losses = {0.0, 0.0001, 0.001, 0.01, 0.05};
  std::vector<double> gbn, sr;
  std::vector<std::string> notes;
  for (double loss : losses) {
    for (const char* recovery : {"go-back-n", "selective-repeat"}) {
      std::unique_ptr<testing::RoceDrop> drop;
      if (loss > 0) {
        auto loaded = testing::RoceDrop::load(loss, 7);
        if (!loaded.ok()) {
          std::fprintf(stderr, "roce_drop: %s\n", loaded.status().to_string().c_str());
          return 1;
        }
        drop = std::move(loaded).value();
        auto scope = testing::NetnsScope::enter(bed.fabric->name());
        if (!scope.ok() ||
            !drop->attach(static_cast<int>(if_nametoindex("fb")), injectors::Direction::kEgress).ok()) {
          std::fprintf(stderr, "cannot attach roce_drop\n");
          return 1;
        }
      }
      const TransferResult r = run_transfer(bed, small_trace, "af_xdp", recovery, opt.quick ? 15 : 30,
                                            opt.max_outstanding);
      const double g = r.goodput_gbps();
      (std::string(recovery) == "go-back-n" ? gbn : sr).push_back(g);
      uint64_t dropped = 0;
      if (drop) {
        auto counts = drop->counts();
        if (counts.ok()) dropped = counts->dropped;
      }
      std::printf("loss %6.2f%% %-17s %7.3f Gb/s  %s in %.2f s, %llu dropped, %llu resent, %llu timeouts\n",
                  loss * 100, recovery, g, r.ok ? "done" : "NOT DONE (time limit)", r.seconds,
                  static_cast<unsigned long long>(dropped),
                  static_cast<unsigned long long>(r.retransmitted),
                  static_cast<unsigned long long>(r.timeouts));
      std::fflush(stdout);
    }
  }

  std::printf("\ngoodput (Gb/s) of %llu MiB A -> B on the veth, one QP, net_af_xdp\n",
              static_cast<unsigned long long>(small >> 20));
  std::printf("%8s %12s %18s\n", "loss", "go-back-N", "selective repeat");
  for (size_t i = 0; i < losses.size(); ++i) {
    std::printf("%7.2f%% %12.3f %18.3f\n", losses[i] * 100, gbn[i], sr[i]);
  }
  std::printf("\n");
  const double scale = std::max({sr[0], gbn[0], 1e-9});
  for (size_t i = 0; i < losses.size(); ++i) {
    auto bar = [&](double v) { return std::string(static_cast<size_t>(v / scale * 50 + 0.5), '#'); };
    std::printf("%6.2f%% GBN |%s %.2f\n", losses[i] * 100, bar(gbn[i]).c_str(), gbn[i]);
    std::printf("%7s SR  |%s %.2f\n", "", bar(sr[i]).c_str(), sr[i]);
  }
  std::printf("\n");
  if (!opt.png.empty()) write_png(opt.png, bed.dir, losses, gbn, sr);

  for (size_t i = 1; i < losses.size(); ++i) {
    if (gbn[0] > 0) {
      std::printf("figure veth_gbn_goodput_at_%s_vs_lossless %.3f x\n", loss_name(losses[i]).c_str(), gbn[i] / gbn[0]);
    }
    if (sr[0] > 0) {
      std::printf("figure veth_sr_goodput_at_%s_vs_lossless %.3f x\n", loss_name(losses[i]).c_str(), sr[i] / sr[0]);
    }
  }
  for (size_t i = 3; i < losses.size(); ++i) {
    std::printf("figure goodput_sr_vs_gbn_at_%s %.3f x\n", loss_name(losses[i]).c_str(),
                gbn[i] > 0 ? sr[i] / gbn[i] : INFINITY);
  }
  std::filesystem::remove_all(bed.dir);
  return 0;
}

}  // namespace
}  // namespace collide

int main(int argc, char** argv) {
  collide::Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--png" && i + 1 < argc) {
      opt.png = argv[++i];
    } else if (a == "--no-loss-curve") {
      opt.loss_curve = false;
    } else if (a == "--max-outstanding" && i + 1 < argc) {
      auto n = collide::parse_number<uint32_t>(argv[++i], "--max-outstanding");
      if (!n.ok()) {
        std::fprintf(stderr, "%s\n", n.status().message().c_str());
        return 2;
      }
      opt.max_outstanding = *n;
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--png FILE] [--no-loss-curve] "
                   "[--max-outstanding PACKETS]\n", argv[0]);
      return 2;
    }
  }
  // The replays' DPDK and libbpf start-up chatter would bury the tables; errors still show.
  setenv("COLLIDE_LOG", "error", 0);
  if (geteuid() != 0) {
    std::fprintf(stderr, "replayer_veth_bench needs root (namespaces, DPDK, BPF)\n");
    return 2;
  }
  return collide::run(opt);
}
