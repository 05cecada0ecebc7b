// Goodput of one queue pair against random loss, and against reordering without loss (per-packet
// spraying), for go-back-N, selective repeat and the out-of-order mode, on the in-memory link
// (virtual time, so the curves are exact and repeatable). Prints tables, a chart, and figure
// lines: each goodput as a ratio of the same mode's lossless, in-order goodput in the same run.
//
// Link: 100 Gb/s, 10 us one way (an RTT of about 20 us, a bandwidth-delay product of ~60 packets
// of 4 KiB, as across a two-tier fabric). Timer: NCCL's default NCCL_IB_TIMEOUT=20 scaled by 1/1000
// (4.3 ms) so that a timeout costs the same share of a 64 MiB transfer as on a real fabric.
// Reordering: the given share of packets takes a slower path, up to 16 packet times late.
#include <array>
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
constexpr std::array kModes = {Recovery::kGoBackN, Recovery::kSelectiveRepeat, Recovery::kOutOfOrder};
const std::vector<double> kLossRates = {0.0, 0.0001, 0.001, 0.01, 0.05};
const std::vector<double> kReorderShares = {0.001, 0.01, 0.1, 0.3};

struct Point {
  double goodput_gbps = 0;
  double resent_per_message = 0;
};

Point mean_over_seeds(Recovery recovery, double loss, double reorder) {
  QpConfig qp;
  qp.recovery = recovery;
  qp.timeout_exponent = 20;
  qp.timeout_scale = 1e-3;
  Point sum;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    LinkConfig data;
    data.delay_ns = 10'000;
    data.loss = loss;
    data.reorder = reorder;
    data.reorder_max_packets = 16;
    data.seed = static_cast<uint64_t>(seed);
    LinkConfig acks;
    acks.delay_ns = 10'000;
    const TransferResult r = run_loopback_transfer(
        qp, data, acks, std::vector<uint64_t>(kMessages, kMessageBytes), 600'000'000'000ull);
    sum.goodput_gbps += r.completed ? r.goodput_gbps() : 0.0;
    sum.resent_per_message += static_cast<double>(r.requester.retransmitted_packets) / kMessages;
  }
  return {sum.goodput_gbps / kSeeds, sum.resent_per_message / kSeeds};
}

std::string label(double share) { return fmt::format("{}%", share * 100); }
// "0_1pct" for 0.1%.
std::string figure_name(double share) {
  std::string s = fmt::format("{}pct", share * 100);
  for (char& c : s) c = c == '.' ? '_' : c;
  return s;
}
const char* short_name(Recovery r) {
  return r == Recovery::kGoBackN ? "gbn" : r == Recovery::kSelectiveRepeat ? "sr" : "ooo";
}

// One table: a row per value of the swept knob, a column per mode.
std::vector<std::array<Point, 3>> sweep(const std::vector<double>& values, bool reorder) {
  std::vector<std::array<Point, 3>> rows;
  for (double v : values) {
    std::array<Point, 3> row;
    for (size_t m = 0; m < kModes.size(); ++m) {
      row[m] = mean_over_seeds(kModes[m], reorder ? 0.0 : v, reorder ? v : 0.0);
    }
    rows.push_back(row);
  }
  return rows;
}

// Rows of the reordering table start with "late", so that lines starting with a loss rate are the
// loss table's only (ci/bench.sh reads those).
void print_table(const char* knob, const char* row_prefix, const std::vector<double>& values,
                 const std::vector<std::array<Point, 3>>& rows) {
  std::printf("%8s %12s %18s %14s   (packets resent per message)\n", knob, "go-back-N",
              "selective repeat", "out-of-order");
  for (size_t i = 0; i < values.size(); ++i) {
    std::printf("%8s %12.2f %18.2f %14.2f   (%.0f / %.0f / %.0f)\n",
                (row_prefix + label(values[i])).c_str(),
                rows[i][0].goodput_gbps, rows[i][1].goodput_gbps, rows[i][2].goodput_gbps,
                rows[i][0].resent_per_message, rows[i][1].resent_per_message,
                rows[i][2].resent_per_message);
  }
  std::printf("\n");
}

}  // namespace

int main() {
  const auto loss = sweep(kLossRates, false);
  const auto reordering = sweep(kReorderShares, true);
  std::printf("goodput (Gb/s) of 16 x 4 MiB on one QP, 100 Gb/s link, mean of %d seeds\n\n", kSeeds);
  print_table("loss", "", kLossRates, loss);
  // A bar per point, 50 columns for the lossless goodput.
  for (size_t i = 0; i < kLossRates.size(); ++i) {
    for (size_t m = 0; m < kModes.size(); ++m) {
      const double v = loss[i][m].goodput_gbps;
      std::printf("%7s %-3s |%s %.1f\n", m == 0 ? label(kLossRates[i]).c_str() : "",
                  short_name(kModes[m]), std::string(static_cast<size_t>(v / loss[0][1].goodput_gbps * 50 + 0.5), '#').c_str(), v);
    }
  }
  std::printf("\nreordering without loss (share of packets up to 16 packets late)\n");
  print_table("late", "late ", kReorderShares, reordering);
  for (size_t i = 1; i < kLossRates.size(); ++i) {
    for (size_t m = 0; m < kModes.size(); ++m) {
      std::printf("figure inmem_%s_goodput_at_%s_vs_lossless %.3f x\n", short_name(kModes[m]),
                  figure_name(kLossRates[i]).c_str(), loss[i][m].goodput_gbps / loss[0][m].goodput_gbps);
    }
  }
  for (size_t i = 0; i < kReorderShares.size(); ++i) {
    for (size_t m = 0; m < kModes.size(); ++m) {
      std::printf("figure inmem_%s_goodput_at_%s_reordered_vs_in_order %.3f x\n", short_name(kModes[m]),
                  figure_name(kReorderShares[i]).c_str(),
                  reordering[i][m].goodput_gbps / loss[0][m].goodput_gbps);
    }
  }
  return 0;
}
