// End to end: the synthesizer's Llama3-70B data-parallel job on 8 GPUs, checked by stats against
// FACTS section 7's worked example (7,840 GB full-mesh, 1,960 GB ring per mini-batch) and by
// validate.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "traces/analysis/test_traces.h"
#include "traces/analysis/trace_stats.h"
#include "traces/analysis/trace_validator.h"
#include "traces/synth/model_spec.h"
#include "traces/synth/synthesizer.h"

namespace collide::traces::analysis {
namespace {

TEST(SynthStats, LlamaDataParallelOnEightGpus) {
  // The worked example's P = 70e9 (the preset's 70.6e9 is the exact count); plain data
  // parallel (ZeRO 0: one all-reduce of the whole 2P-byte gradient, in buckets), one mini-batch.
  const std::string yaml =
      "model: {name: llama3-70b, parameters: 70e9, layers: 80, hidden_size: 8192,"
      " ffn_hidden_size: 28672, attention_heads: 64, kv_heads: 8, vocab_size: 128256,"
      " sequence_length: 8192}\n"
      "training: {micro_batch_size: 1, global_batch_size: 8, datatype: bfloat16, iterations: 1}\n"
      "parallelism: {tp: 1, pp: 1, dp: 8, zero_stage: 0, dp_bucket_bytes: 1GB}\n"
      "hardware: {gpu_tflops: 989, efficiency: 0.4, gpus_per_host: 8}\n";
  auto spec = synth::parse_model_spec(yaml, "llama3-70b-dp8.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  const std::string path = testing::temp_trace_path("synth-llama");
  auto synthesized = synth::synthesize(*spec, path);
  ASSERT_TRUE(synthesized.ok()) << synthesized.status().to_string();

  auto stats = compute_trace_stats(path);
  ASSERT_TRUE(stats.ok()) << stats.status().to_string();
  EXPECT_EQ(stats->world_size, 8u);
  EXPECT_EQ(stats->by_iteration.size(), 1u);
  EXPECT_EQ(stats->job.full_mesh_bytes, 7'840'000'000'000u);
  EXPECT_EQ(stats->job.nccl_bytes, 1'960'000'000'000u);
  EXPECT_EQ(stats->job.issued_bytes, 8 * 140'000'000'000u);

  auto report = validate_trace(path, {});
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_TRUE(report->valid()) << (report->issues.empty() ? "" : report->issues[0].to_string());
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace collide::traces::analysis
