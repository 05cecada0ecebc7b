// Expanding a synthesized 16,384-rank job into flow steps: the 8 ranks of one host, and a
// streaming pass over the whole job, each timed against just reading the same ops from the
// trace file (the peer measured in the same run).
//
//   replayer_expand_bench [--trace FILE] [--sample-every K]
//
// Without --trace it synthesizes one iteration of configs/models/llama3-405b.yaml (TP8 PP16
// DP128) into a temporary file first. The whole-job pass reads every op of the file but expands
// only the ranks of every K-th host and extrapolates the time to all hosts by multiplying by K;
// it says so in its output. The default, 64, expands 32 of the 2,048 hosts (two per pipeline
// stage, each a whole TP group): measured on the 2-core CI machine, expanding every rank would
// take over an hour (about 400 ns per flow step, 1.8e10 steps). --sample-every 1 expands all.
// Ends with `figure <name> <value> <unit>` lines.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/parse_number.h"
#include "replayer/collectives/expander.h"
#include "traces/synth/model_spec.h"
#include "traces/synth/synthesizer.h"
#include "traces/trace_io.h"

namespace {

using collide::parse_number;
using collide::replayer::collectives::ExpandedOp;
using collide::replayer::collectives::Expander;
using collide::replayer::collectives::ExpandOptions;
using collide::replayer::collectives::Placement;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kRanksPerHost = 8;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "expand_bench: %s\n", what.c_str());
  std::exit(1);
}

struct Tally {
  uint64_t ops = 0;
  uint64_t steps = 0;
  uint64_t bytes = 0;  // bytes sent by the expanded steps
};

Expander make_expander(const collide::v1::TraceHeader& header) {
  auto placement = Placement::uniform(header.world_size(), kRanksPerHost, kRanksPerHost);
  if (!placement.ok()) die(placement.status().message());
  auto expander = Expander::create(header, *placement, ExpandOptions{});
  if (!expander.ok()) die(expander.status().message());
  return std::move(expander).value();
}

void count(const ExpandedOp& e, Tally& t) {
  ++t.ops;
  t.steps += e.steps.size();
  for (const auto& s : e.steps) {
    if (s.kind == collide::replayer::collectives::StepKind::kSend) t.bytes += s.bytes;
  }
}

// Host 0's ranks come first in a synthesized trace (rank order), so this reads only their ops.
// Returns the time to read them; `ops` receives them for the expansion that follows.
double read_host0(const std::string& path, std::vector<collide::v1::Op>& ops) {
  const auto start = Clock::now();
  auto reader = collide::traces::TraceReader::open(path);
  if (!reader.ok()) die(reader.status().message());
  collide::v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    if (!more.ok()) die(more.status().message());
    if (!*more || op.rank() >= kRanksPerHost) break;
    ops.push_back(op);
  }
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each phase's line shows as it ends, through tee
  std::string trace;
  uint32_t sample_every = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--trace" && i + 1 < argc) {
      trace = argv[++i];
    } else if (arg == "--sample-every" && i + 1 < argc) {
      auto n = parse_number<uint32_t>(argv[++i], "--sample-every");
      if (!n.ok()) die(n.status().message());
      sample_every = *n;
    } else {
      die("usage: replayer_expand_bench [--trace FILE] [--sample-every K]");
    }
  }
  if (sample_every == 0) die("--sample-every must be positive");

  std::string temporary;
  if (trace.empty()) {
    temporary = (std::filesystem::temp_directory_path() /
                 ("collide_expand_bench_" + std::to_string(::getpid()) + ".trace"))
                    .string();
    trace = temporary;
    auto spec = collide::traces::synth::load_model_spec(std::string(COLLIDE_CONFIGS_DIR) +
                                                        "/models/llama3-405b.yaml");
    if (!spec.ok()) die(spec.status().message());
    const auto start = Clock::now();
    auto report = collide::traces::synth::synthesize(*spec, trace);
    if (!report.ok()) die(report.status().message());
    std::printf(
        "synthesized llama3-405b (TP8 PP16 DP128), one iteration: %llu ops of %u ranks "
        "in %.1f s, %.0f MB on disk, peak RSS %.1f MiB\n",
        static_cast<unsigned long long>(report->ops), report->ranks, seconds_since(start),
        static_cast<double>(std::filesystem::file_size(trace)) / 1e6, peak_rss_mib());
  }

  // One host: read its 8 ranks' ops, then expand them in each rank's order.
  std::vector<collide::v1::Op> host_ops;
  const double host_read = read_host0(trace, host_ops);
  auto reader = collide::traces::TraceReader::open(trace);
  if (!reader.ok()) die(reader.status().message());
  const collide::v1::TraceHeader header = (*reader)->header();
  Tally host;
  const auto host_start = Clock::now();
  {
    Expander expander = make_expander(header);
    for (const auto& op : host_ops) {
      auto e = expander.expand(op);
      if (!e.ok()) die(e.status().message());
      count(*e, host);
    }
  }
  const double host_expand = seconds_since(host_start);
  std::printf(
      "host 0 (%u ranks): %llu ops -> %llu steps, %.1f GB sent; expand %.3f s, "
      "read %.3f s\n",
      kRanksPerHost, static_cast<unsigned long long>(host.ops),
      static_cast<unsigned long long>(host.steps), static_cast<double>(host.bytes) / 1e9,
      host_expand, host_read);
  host_ops.clear();
  host_ops.shrink_to_fit();

  // Whole job, streaming: each op is read, expanded (sampled hosts), counted and dropped. The
  // read time is measured separately on the same pass (reading every op), and the expansion
  // time only around expand().
  const uint32_t hosts = header.world_size() / kRanksPerHost;
  Expander expander = make_expander(header);
  Tally all;
  uint64_t ops_read = 0;
  uint64_t sampled_ops_read = 0;
  double expand_seconds = 0;
  double sampled_read_seconds = 0;
  collide::v1::Op op;
  const auto pass_start = Clock::now();
  while (true) {
    const auto read_start = Clock::now();
    auto more = (*reader)->next(op);
    const double read = seconds_since(read_start);
    if (!more.ok()) die(more.status().message());
    if (!*more) break;
    ++ops_read;
    const uint32_t host_index = op.rank() / kRanksPerHost;
    if (host_index % sample_every != 0) continue;
    ++sampled_ops_read;
    sampled_read_seconds += read;
    const auto expand_start = Clock::now();
    auto e = expander.expand(op);
    if (!e.ok()) die(e.status().message());
    count(*e, all);
    expand_seconds += seconds_since(expand_start);
  }
  const double pass_seconds = seconds_since(pass_start);
  const double rss = peak_rss_mib();
  const uint32_t sampled_hosts = (hosts + sample_every - 1) / sample_every;
  const double scale = static_cast<double>(hosts) / sampled_hosts;
  std::printf(
      "whole job: read %llu ops in %.1f s; expanded the %llu ops of %u of %u hosts "
      "(every %u-th) into %llu steps in %.1f s\n",
      static_cast<unsigned long long>(ops_read), pass_seconds,
      static_cast<unsigned long long>(all.ops), sampled_hosts, hosts, sample_every,
      static_cast<unsigned long long>(all.steps), expand_seconds);
  if (sample_every > 1) {
    std::printf(
        "extrapolated to all %u hosts (x%.0f, an estimate): expansion %.0f s, %.3g steps, "
        "%.1f TB sent\n",
        hosts, scale, expand_seconds * scale, static_cast<double>(all.steps) * scale,
        static_cast<double>(all.bytes) * scale / 1e12);
  }
  std::printf("peak RSS %.1f MiB\n", rss);
  if (!temporary.empty()) std::filesystem::remove(temporary);

  std::printf("figure expand_host_vs_read %.2f x\n", host_expand / host_read);
  std::printf("figure expand_all_vs_read %.2f x\n", expand_seconds / sampled_read_seconds);
  std::printf("figure expand_host_seconds %.4f s\n", host_expand);
  std::printf("figure expand_all_seconds%s %.1f s\n", sample_every > 1 ? "_extrapolated" : "",
              expand_seconds * scale);
  std::printf("figure expand_peak_rss %.1f MiB\n", rss);
  return 0;
}
