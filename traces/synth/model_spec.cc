#include "traces/synth/model_spec.h"

#include <fmt/format.h>

#include "common/yaml_proto.h"
#include "traces/op_types.h"

namespace collide::traces::synth {
namespace {

constexpr uint64_t kDefaultBucketBytes = 40ull << 20;
constexpr uint64_t kMaxWorld = 1u << 24;

// Points an error at where the field was set: a line of the YAML file or a command-line flag.
class Where {
 public:
  Where(std::string source, const std::map<std::string, int>* lines,
        const std::map<std::string, std::string>* flags)
      : source_(std::move(source)), lines_(lines), flags_(flags) {}

  Status error(const std::string& field, const std::string& what) const {
    if (flags_ != nullptr) {
      if (auto it = flags_->find(field); it != flags_->end()) {
        return invalid_argument(fmt::format("{} (overriding {}): {}", it->second, field, what));
      }
    }
    int line = 0;
    if (lines_ != nullptr) {
      // The field itself, or the nearest enclosing one that was written down.
      std::string f = field;
      while (!f.empty()) {
        if (auto it = lines_->find(f); it != lines_->end()) {
          line = it->second;
          break;
        }
        const auto dot = f.find_last_of('.');
        if (dot == std::string::npos) break;
        f.resize(dot);
      }
    }
    return invalid_argument(
        fmt::format("{}:{}: {}: {}", source_, line > 0 ? std::to_string(line) : "?", field, what));
  }

 private:
  std::string source_;
  const std::map<std::string, int>* lines_;
  const std::map<std::string, std::string>* flags_;
};

Status check(const v1::ModelSpec& spec, const Where& w) {
  const v1::ModelArchitecture& m = spec.model();
  const v1::TrainingSpec& t = spec.training();
  const v1::ParallelismSpec& p = spec.parallelism();
  const v1::HardwareSpec& h = spec.hardware();
  if (m.name().empty()) return w.error("model.name", "the model needs a name");
  if (m.parameters() == 0) return w.error("model.parameters", "must be positive");
  if (m.layers() == 0) return w.error("model.layers", "must be positive");
  if (m.hidden_size() == 0) return w.error("model.hidden_size", "must be positive");
  if (m.attention_heads() == 0) return w.error("model.attention_heads", "must be positive");
  if (m.hidden_size() % m.attention_heads() != 0) {
    return w.error("model.attention_heads", fmt::format("{} heads do not divide hidden size {}",
                                                        m.attention_heads(), m.hidden_size()));
  }
  if (m.kv_heads() > m.attention_heads() || m.attention_heads() % m.kv_heads() != 0) {
    return w.error("model.kv_heads", fmt::format("{} kv heads do not divide {} attention heads",
                                                 m.kv_heads(), m.attention_heads()));
  }
  if (m.sequence_length() == 0) return w.error("model.sequence_length", "must be positive");
  if (m.expert_parameters() > m.parameters()) {
    return w.error("model.expert_parameters", "cannot exceed model.parameters");
  }
  const bool moe = m.experts() > 1;
  if (moe && (m.experts_top_k() == 0 || m.experts_top_k() > m.experts())) {
    return w.error(
        "model.experts_top_k",
        fmt::format("a mixture of {} experts needs top-k within 1..{}", m.experts(), m.experts()));
  }
  if (moe && m.expert_parameters() == 0) {
    return w.error("model.expert_parameters", "a mixture of experts needs its expert parameters");
  }
  if (!moe && m.expert_parameters() != 0) {
    return w.error("model.expert_parameters", "only a model with experts has expert parameters");
  }
  if (t.micro_batch_size() == 0) return w.error("training.micro_batch_size", "must be positive");
  if (datatype_size(t.datatype()) == 0) return w.error("training.datatype", "needs a datatype");
  if (t.iterations() == 0) return w.error("training.iterations", "must be positive");
  const uint64_t per_step = uint64_t{t.micro_batch_size()} * p.dp();
  if (t.global_batch_size() == 0 || t.global_batch_size() % per_step != 0) {
    return w.error("training.global_batch_size",
                   fmt::format("{} is not a multiple of micro_batch_size * dp = {}",
                               t.global_batch_size(), per_step));
  }
  if (p.tp() == 0) return w.error("parallelism.tp", "must be positive");
  if (p.pp() == 0) return w.error("parallelism.pp", "must be positive");
  if (p.dp() == 0) return w.error("parallelism.dp", "must be positive");
  if (p.ep() == 0) return w.error("parallelism.ep", "must be positive");
  const uint64_t world = uint64_t{p.tp()} * p.pp() * p.dp();
  if (world > kMaxWorld) {
    return w.error("parallelism",
                   fmt::format("tp * pp * dp = {} ranks is more than {}", world, kMaxWorld));
  }
  if (m.attention_heads() % p.tp() != 0) {
    return w.error("parallelism.tp", fmt::format("tp {} does not divide {} attention heads", p.tp(),
                                                 m.attention_heads()));
  }
  if (p.pp() > m.layers()) {
    return w.error("parallelism.pp",
                   fmt::format("{} pipeline stages for {} layers", p.pp(), m.layers()));
  }
  if (p.sequence_parallel() && m.sequence_length() % p.tp() != 0) {
    return w.error(
        "parallelism.sequence_parallel",
        fmt::format("tp {} does not divide sequence length {}", p.tp(), m.sequence_length()));
  }
  if (p.ep() > 1) {
    if (!moe) return w.error("parallelism.ep", "expert parallelism needs a model with experts");
    if (m.experts() % p.ep() != 0) {
      return w.error("parallelism.ep",
                     fmt::format("ep {} does not divide {} experts", p.ep(), m.experts()));
    }
    if (p.dp() % p.ep() != 0) {
      return w.error("parallelism.ep", fmt::format("ep {} does not divide dp {} (experts are "
                                                   "spread over data-parallel ranks)",
                                                   p.ep(), p.dp()));
    }
  }
  if (p.virtual_pipeline_stages() != 1) {
    return w.error("parallelism.virtual_pipeline_stages",
                   "the interleaved (virtual pipeline) schedule is not supported yet; use 1");
  }
  if (p.zero_stage() > 3) return w.error("parallelism.zero_stage", "must be 0, 1, 2 or 3");
  if (p.dp_bucket_bytes() == 0) return w.error("parallelism.dp_bucket_bytes", "must be positive");
  if (h.gpu_tflops() < 0) return w.error("hardware.gpu_tflops", "cannot be negative");
  if (!(h.efficiency() > 0 && h.efficiency() <= 1)) {
    return w.error("hardware.efficiency", "must be within (0, 1]");
  }
  if (h.gpus_per_host() == 0) return w.error("hardware.gpus_per_host", "must be positive");
  return {};
}

Result<v1::ModelSpec> finish(v1::ModelSpec spec, const SpecOverrides& o, const std::string& source,
                             const std::map<std::string, int>* lines) {
  struct Count {
    const std::optional<uint32_t>& value;
    const char* field;
    const char* flag;
    void (*apply)(v1::ModelSpec&, uint32_t);
  };
  const Count counts[] = {
      {o.tp, "parallelism.tp", "tp",
       [](v1::ModelSpec& s, uint32_t v) { s.mutable_parallelism()->set_tp(v); }},
      {o.pp, "parallelism.pp", "pp",
       [](v1::ModelSpec& s, uint32_t v) { s.mutable_parallelism()->set_pp(v); }},
      {o.dp, "parallelism.dp", "dp",
       [](v1::ModelSpec& s, uint32_t v) { s.mutable_parallelism()->set_dp(v); }},
      {o.ep, "parallelism.ep", "ep",
       [](v1::ModelSpec& s, uint32_t v) { s.mutable_parallelism()->set_ep(v); }},
      {o.virtual_pipeline_stages, "parallelism.virtual_pipeline_stages", "vpp",
       [](v1::ModelSpec& s, uint32_t v) {
         s.mutable_parallelism()->set_virtual_pipeline_stages(v);
       }},
      {o.micro_batch_size, "training.micro_batch_size", "micro-batch",
       [](v1::ModelSpec& s, uint32_t v) { s.mutable_training()->set_micro_batch_size(v); }},
      {o.global_batch_size, "training.global_batch_size", "global-batch",
       [](v1::ModelSpec& s, uint32_t v) { s.mutable_training()->set_global_batch_size(v); }},
      {o.iterations, "training.iterations", "iterations",
       [](v1::ModelSpec& s, uint32_t v) { s.mutable_training()->set_iterations(v); }},
  };
  std::map<std::string, std::string> flags;
  const Where where(source, lines, &flags);
  for (const Count& c : counts) {
    if (!c.value) continue;
    flags[c.field] = fmt::format("--{} {}", c.flag, *c.value);
    // A zero given on the command line is a mistake, not a request for the default.
    if (*c.value == 0) return where.error(c.field, "must be positive");
    c.apply(spec, *c.value);
  }
  v1::ParallelismSpec& p = *spec.mutable_parallelism();
  if (o.zero_stage) {
    flags["parallelism.zero_stage"] = fmt::format("--zero-stage {}", *o.zero_stage);
    p.set_zero_stage(*o.zero_stage);
  }
  if (o.sequence_parallel) {
    flags["parallelism.sequence_parallel"] =
        fmt::format("--sequence-parallel {}", *o.sequence_parallel);
    p.set_sequence_parallel(*o.sequence_parallel);
  }
  if (o.dp_bucket_bytes) {
    flags["parallelism.dp_bucket_bytes"] = fmt::format("--bucket-bytes {}", *o.dp_bucket_bytes);
    if (*o.dp_bucket_bytes == 0)
      return where.error("parallelism.dp_bucket_bytes", "must be positive");
    p.set_dp_bucket_bytes(*o.dp_bucket_bytes);
  }
  apply_defaults(spec);
  COLLIDE_RETURN_IF_ERROR(check(spec, where));
  return spec;
}

}  // namespace

void apply_defaults(v1::ModelSpec& spec) {
  v1::ModelArchitecture& m = *spec.mutable_model();
  v1::TrainingSpec& t = *spec.mutable_training();
  v1::ParallelismSpec& p = *spec.mutable_parallelism();
  v1::HardwareSpec& h = *spec.mutable_hardware();
  if (m.kv_heads() == 0) m.set_kv_heads(m.attention_heads());
  if (m.experts() > 1 && m.experts_top_k() == 0) m.set_experts_top_k(1);
  if (t.micro_batch_size() == 0) t.set_micro_batch_size(1);
  if (t.datatype() == v1::DATA_TYPE_UNSPECIFIED) t.set_datatype(v1::DATA_TYPE_BFLOAT16);
  if (t.iterations() == 0) t.set_iterations(1);
  if (p.tp() == 0) p.set_tp(1);
  if (p.pp() == 0) p.set_pp(1);
  if (p.dp() == 0) p.set_dp(1);
  if (p.ep() == 0) p.set_ep(1);
  if (p.virtual_pipeline_stages() == 0) p.set_virtual_pipeline_stages(1);
  if (p.dp_bucket_bytes() == 0) p.set_dp_bucket_bytes(kDefaultBucketBytes);
  if (t.global_batch_size() == 0) {
    t.set_global_batch_size(t.micro_batch_size() * p.dp() * p.pp());
  }
  if (h.efficiency() == 0) h.set_efficiency(0.4);
  if (h.gpus_per_host() == 0) h.set_gpus_per_host(8);
}

Status validate(const v1::ModelSpec& spec, const std::string& source,
                const std::map<std::string, int>* lines) {
  return check(spec, Where(source, lines, nullptr));
}

Result<v1::ModelSpec> load_model_spec(const std::string& path, const SpecOverrides& overrides) {
  v1::ModelSpec spec;
  config::FieldLines lines;
  COLLIDE_RETURN_IF_ERROR(config::parse_yaml_file(path, spec, &lines));
  return finish(std::move(spec), overrides, path, &lines);
}

Result<v1::ModelSpec> parse_model_spec(const std::string& yaml, const std::string& source_name,
                                       const SpecOverrides& overrides) {
  v1::ModelSpec spec;
  config::FieldLines lines;
  COLLIDE_RETURN_IF_ERROR(config::parse_yaml_string(yaml, source_name, spec, &lines));
  return finish(std::move(spec), overrides, source_name, &lines);
}

uint32_t world_size(const v1::ModelSpec& spec) {
  const v1::ParallelismSpec& p = spec.parallelism();
  return p.tp() * p.pp() * p.dp();
}

uint32_t micro_batches(const v1::ModelSpec& spec) {
  const uint64_t per_step = uint64_t{spec.training().micro_batch_size()} * spec.parallelism().dp();
  return static_cast<uint32_t>(spec.training().global_batch_size() / per_step);
}

}  // namespace collide::traces::synth
