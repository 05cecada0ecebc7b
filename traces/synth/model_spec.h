#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "collide/model.pb.h"
#include "common/result.h"

// Model and parallelism specs (proto/collide/model.proto): loading the YAML presets, filling the
// documented defaults, applying command-line overrides and checking that the job can exist.
namespace collide::traces::synth {

// Values given on the command line; each one replaces the spec's field.
struct SpecOverrides {
  std::optional<uint32_t> tp, pp, dp, ep, virtual_pipeline_stages, zero_stage;
  std::optional<uint32_t> micro_batch_size, global_batch_size, iterations;
  std::optional<bool> sequence_parallel;
  std::optional<uint64_t> dp_bucket_bytes;
};

// Fills what was left at zero: micro-batch 1, bfloat16, 1 iteration, degrees 1, kv heads = heads,
// 40 MiB gradient buckets, 8 GPUs per host, efficiency 0.4, and a global batch of one micro-batch
// per pipeline stage per replica (the smallest that fills the pipeline).
void apply_defaults(v1::ModelSpec& spec);

// Checks a spec with its defaults filled. `source` and `lines` (from the YAML parser) let the
// error name the file, the line and the field; without them it names the field only.
Status validate(const v1::ModelSpec& spec, const std::string& source = "model spec",
                const std::map<std::string, int>* lines = nullptr);

// Loads a YAML spec, applies `overrides` and the defaults, and validates the result. Errors name
// the file, the line and the field; an override that makes the spec invalid names the flag.
Result<v1::ModelSpec> load_model_spec(const std::string& path, const SpecOverrides& overrides = {});

// Same from YAML text (tests, embedded specs).
Result<v1::ModelSpec> parse_model_spec(const std::string& yaml, const std::string& source_name,
                                       const SpecOverrides& overrides = {});

// Derived quantities the generator and the header use.
uint32_t world_size(const v1::ModelSpec& spec);
// Micro-batches each pipeline runs per iteration: global batch / (micro-batch * dp).
uint32_t micro_batches(const v1::ModelSpec& spec);

}  // namespace collide::traces::synth
