#include "traces/synth/model_spec.h"

#include <gtest/gtest.h>

#include <string>

namespace collide::traces::synth {
namespace {

const std::string kConfigs = COLLIDE_CONFIGS_DIR;

v1::ModelSpec load(const std::string& name, const SpecOverrides& o = {}) {
  auto spec = load_model_spec(kConfigs + "/models/" + name, o);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : v1::ModelSpec{};
}

TEST(ModelPresets, Llama3_405b) {
  const v1::ModelSpec s = load("llama3-405b.yaml");
  EXPECT_EQ(s.model().layers(), 126u);
  EXPECT_EQ(s.model().hidden_size(), 16384u);
  EXPECT_EQ(s.model().ffn_hidden_size(), 53248u);
  EXPECT_EQ(s.model().attention_heads(), 128u);
  EXPECT_EQ(s.model().kv_heads(), 8u);
  EXPECT_EQ(s.model().vocab_size(), 128256u);
  EXPECT_EQ(s.model().parameters(), 405'000'000'000u);
  EXPECT_EQ(world_size(s), 16384u);
  EXPECT_EQ(micro_batches(s), 16u);
  EXPECT_EQ(s.parallelism().dp_bucket_bytes(), 40u << 20);
}

TEST(ModelPresets, Llama3_70b) {
  const v1::ModelSpec s = load("llama3-70b.yaml");
  EXPECT_EQ(s.model().layers(), 80u);
  EXPECT_EQ(s.model().hidden_size(), 8192u);
  EXPECT_EQ(s.model().ffn_hidden_size(), 28672u);
  EXPECT_EQ(s.model().attention_heads(), 64u);
  EXPECT_EQ(s.model().kv_heads(), 8u);
  EXPECT_EQ(world_size(s), 1024u);
}

TEST(ModelPresets, Gpt3_175b) {
  const v1::ModelSpec s = load("gpt3-175b.yaml");
  EXPECT_EQ(s.model().layers(), 96u);
  EXPECT_EQ(s.model().hidden_size(), 12288u);
  EXPECT_EQ(s.model().attention_heads(), 96u);
  EXPECT_EQ(s.model().vocab_size(), 50257u);
  EXPECT_EQ(s.model().sequence_length(), 2048u);
  EXPECT_EQ(s.training().datatype(), v1::DATA_TYPE_FLOAT16);
  EXPECT_EQ(world_size(s), 1536u);
  EXPECT_EQ(micro_batches(s), 128u);
}

TEST(ModelPresets, Mixtral8x7b) {
  const v1::ModelSpec s = load("mixtral-8x7b.yaml");
  EXPECT_EQ(s.model().layers(), 32u);
  EXPECT_EQ(s.model().hidden_size(), 4096u);
  EXPECT_EQ(s.model().ffn_hidden_size(), 14336u);
  EXPECT_EQ(s.model().experts(), 8u);
  EXPECT_EQ(s.model().experts_top_k(), 2u);
  EXPECT_EQ(s.parallelism().ep(), 8u);
  EXPECT_EQ(world_size(s), 64u);
}

TEST(ModelSpec, OverridesReplaceTheFile) {
  SpecOverrides o;
  o.tp = 4;
  o.pp = 2;
  o.dp = 4;
  o.global_batch_size = 64;
  o.iterations = 3;
  const v1::ModelSpec s = load("llama3-405b.yaml", o);
  EXPECT_EQ(world_size(s), 32u);
  EXPECT_EQ(micro_batches(s), 16u);
  EXPECT_EQ(s.training().iterations(), 3u);
}

TEST(ModelSpec, DefaultsFillWhatIsMissing) {
  auto s = parse_model_spec(
      "model: {name: m, parameters: 1e6, layers: 4, hidden_size: 64, attention_heads: 4,"
      " sequence_length: 16}\n",
      "m.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->model().kv_heads(), 4u);
  EXPECT_EQ(s->training().datatype(), v1::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(s->parallelism().tp(), 1u);
  EXPECT_EQ(s->hardware().gpus_per_host(), 8u);
  EXPECT_EQ(micro_batches(*s), 1u);
}

std::string error_of(const std::string& yaml, const SpecOverrides& o = {}) {
  auto s = parse_model_spec(yaml, "bad.yaml", o);
  return s.ok() ? "" : s.status().message();
}

constexpr const char* kSmall =
    "model:\n"
    "  name: m\n"
    "  parameters: 1e6\n"
    "  layers: 4\n"
    "  hidden_size: 64\n"
    "  attention_heads: 4\n"
    "  sequence_length: 16\n";

TEST(ModelSpec, ErrorsNameFileLineAndField) {
  EXPECT_EQ(error_of(std::string(kSmall) + "parallelism:\n  tp: 3\n"),
            "bad.yaml:9: parallelism.tp: tp 3 does not divide 4 attention heads");
  EXPECT_EQ(error_of(std::string(kSmall) + "parallelism:\n  pp: 8\n"),
            "bad.yaml:9: parallelism.pp: 8 pipeline stages for 4 layers");
  EXPECT_NE(error_of(std::string(kSmall) + "parallelism:\n  tensor: 2\n")
                .find("bad.yaml:9: parallelism.tensor: unknown field"),
            std::string::npos);
  EXPECT_EQ(error_of(std::string(kSmall) + "training:\n  global_batch_size: 3\nparallelism:\n"
                                           "  dp: 2\n"),
            "bad.yaml:9: training.global_batch_size: 3 is not a multiple of micro_batch_size * "
            "dp = 2");
  EXPECT_EQ(error_of(std::string(kSmall) + "parallelism:\n  ep: 2\n"),
            "bad.yaml:9: parallelism.ep: expert parallelism needs a model with experts");
  EXPECT_EQ(error_of("model:\n  name: m\n  layers: 4\n"),
            "bad.yaml:1: model.parameters: must be positive");
  EXPECT_NE(error_of("model: [1, 2\n").find("bad.yaml"), std::string::npos);
}

TEST(ModelSpec, OverrideErrorsNameTheFlag) {
  SpecOverrides o;
  o.tp = 3;
  EXPECT_EQ(error_of(kSmall, o),
            "--tp 3 (overriding parallelism.tp): tp 3 does not divide 4 attention heads");
  SpecOverrides zero;
  zero.dp = 0;
  EXPECT_EQ(error_of(kSmall, zero), "--dp 0 (overriding parallelism.dp): must be positive");
}

TEST(ModelSpec, InterleavedScheduleIsRefusedNotIgnored) {
  EXPECT_NE(error_of(std::string(kSmall) + "parallelism:\n  pp: 2\n  virtual_pipeline_stages: 2\n")
                .find("not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace collide::traces::synth
