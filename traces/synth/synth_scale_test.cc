// One iteration of a 16,384-rank Llama 3 405B job (TP8 PP16 DP128, 2048 sequences of 8192
// tokens, sequence parallel, ZeRO-1) synthesized end to end: the op count must match the one
// worked out by hand below, and memory must stay flat (the generator holds one rank at a time).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "traces/synth/model_spec.h"
#include "traces/synth/synthesizer.h"

namespace collide::traces::synth {
namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

TEST(SynthScale, Llama3_405bOneIterationOn16384Ranks) {
  auto spec = load_model_spec(std::string(COLLIDE_CONFIGS_DIR) + "/models/llama3-405b.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(world_size(*spec), 16384u);

  // By hand: 126 layers over 16 stages: 14 stages of 8, 2 of 7. 16 micro-batches per pipeline.
  // Per layer and micro-batch, sequence-parallel TP does 2 all-gathers and 2 reduce-scatters
  // forward and the same backward: 8 ops. Pipeline: 16 sends and 16 receives each way on middle
  // stages, one way on the first and last. ZeRO-1: the 405e9/126 * layers / 8 bf16 gradients of
  // a rank in 40 MiB buckets (20,971,520 elements), one reduce-scatter and one all-gather each.
  uint64_t expected = 0;
  for (uint32_t stage = 0; stage < 16; ++stage) {
    const uint32_t layers = stage < 14 ? 8 : 7;
    const uint64_t tp = 8ull * layers * 16;
    const uint64_t pp = (stage == 0 || stage == 15) ? 32 : 64;
    const double shard = std::ceil(405e9 / 126 * layers / 8);
    const auto buckets = static_cast<uint64_t>(std::ceil(shard / 20'971'520.0));
    expected += (tp + pp + 2 * buckets) * 8 * 128;  // TP * DP ranks per stage
  }

  const double rss_before = peak_rss_mib();
  const auto start = std::chrono::steady_clock::now();
  auto report = synthesize(*spec, "/dev/null");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(report.ok()) << report.status().message();
  const double rss_after = peak_rss_mib();
  EXPECT_EQ(report->ranks, 16384u);
  EXPECT_EQ(report->ops, expected);
  std::printf(
      "synthesized %llu ops of %u ranks in %.1f s (%.2f M ops/s); peak RSS %.1f MiB "
      "(%.1f MiB before)\n",
      static_cast<unsigned long long>(report->ops), report->ranks, seconds,
      static_cast<double>(report->ops) / seconds / 1e6, rss_after, rss_before);
  RecordProperty("ops", std::to_string(report->ops));
  RecordProperty("seconds", std::to_string(seconds));
  RecordProperty("peak_rss_mib", std::to_string(rss_after));
  // The header (16,384 ranks, 3,201 communicators) is a few MB; everything else is per rank.
  EXPECT_LT(rss_after, 64.0);
}

}  // namespace
}  // namespace collide::traces::synth
