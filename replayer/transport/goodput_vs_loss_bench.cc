// Goodput of one queue pair against random loss, for go-back-N and selective repeat, on the
// in-memory link (virtual time, so the curve is exact and repeatable). Prints a table, a chart,
// and figure lines: each goodput as a ratio of the same mode's lossless goodput in the same run.
//
// Link: 100 Gb/s, 10 us one way (an RTT of about 20 us, a bandwidth-delay product of ~60 packets
// of 4 KiB, as across a two-tier fabric). Timer: NCCL's default NCCL_IB_TIMEOUT=20 scaled by 1/1000
// (4.3 ms) so that a timeout costs the same share of a 64 MiB transfer as on a real fabric.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "replayer/transport/loopback_transfer.h"

namespace {

using namespace collide::replayer::transport;

constexpr uint64_t kMessageBytes = 4u << 20;
constexpr int kMessages = 16;
constexpr int kSeeds = 5;
const std::vector<double> kLossRates = {0.0, 0.0001, 0.001, 0.01, 0.05};

double mean_goodput(Recovery recovery, double loss) {
  QpConfig qp;
  qp.recovery = recovery;
  qp.timeout_exponent = 20;
  qp.timeout_scale = 1e-3;
  double sum = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    LinkConfig data;
    data.delay_ns = 10'000;
    data.loss = loss;
    data.seed = static_cast<uint64_t>(seed);
    LinkConfig acks;
    acks.delay_ns = 10'000;
    const TransferResult r = run_loopback_transfer(
        qp, data, acks, std::vector<uint64_t>(kMessages, kMessageBytes), 600'000'000'000ull);
    sum += r.completed ? r.goodput_gbps() : 0.0;
  }
  return sum / kSeeds;
}

std::string label(double loss) { return fmt::format("{}%", loss * 100); }

}  // namespace

int main() {
  std::vector<double> gbn, sr;
  for (double loss : kLossRates) {
    gbn.push_back(mean_goodput(Recovery::kGoBackN, loss));
    sr.push_back(mean_goodput(Recovery::kSelectiveRepeat, loss));
  }
  std::printf("goodput (Gb/s) of 16 x 4 MiB on one QP, 100 Gb/s link, mean of %d seeds\n", kSeeds);
  std::printf("%8s %12s %18s\n", "loss", "go-back-N", "selective repeat");
  for (size_t i = 0; i < kLossRates.size(); ++i) {
    std::printf("%8s %12.2f %18.2f\n", label(kLossRates[i]).c_str(), gbn[i], sr[i]);
  }
  std::printf("\n");
  // A bar per point, 50 columns for the lossless goodput.
  for (size_t i = 0; i < kLossRates.size(); ++i) {
    const auto bar = [&](double v) { return std::string(static_cast<size_t>(v / sr[0] * 50 + 0.5), '#'); };
    std::printf("%7s GBN |%s %.1f\n", label(kLossRates[i]).c_str(), bar(gbn[i]).c_str(), gbn[i]);
    std::printf("%7s SR  |%s %.1f\n", "", bar(sr[i]).c_str(), sr[i]);
  }
  std::printf("\n");
  const char* names[] = {"0", "0_01pct", "0_1pct", "1pct", "5pct"};
  for (size_t i = 1; i < kLossRates.size(); ++i) {
    std::printf("figure inmem_gbn_goodput_at_%s_vs_lossless %.3f x\n", names[i], gbn[i] / gbn[0]);
    std::printf("figure inmem_sr_goodput_at_%s_vs_lossless %.3f x\n", names[i], sr[i] / sr[0]);
  }
  return 0;
}
