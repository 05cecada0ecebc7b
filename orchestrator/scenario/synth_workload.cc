#include "orchestrator/scenario/synth_workload.h"

#include <cmath>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "traces/synth/model_spec.h"

namespace collide::orchestrator {
namespace {

namespace fs = std::filesystem;

bool looks_like_path(const std::string& model) {
  return model.find('/') != std::string::npos || fs::path(model).extension() == ".yaml" ||
         fs::path(model).extension() == ".yml";
}

template <typename T>
std::optional<T> nonzero(T value) {
  return value != T{} ? std::optional<T>(value) : std::nullopt;
}

}  // namespace

Result<std::string> resolve_model_spec(const std::string& model, const fs::path& scenario_dir) {
  if (model.empty()) return invalid_argument("no model given");
  std::vector<fs::path> candidates;
  if (looks_like_path(model)) {
    if (fs::path(model).is_absolute()) {
      candidates.push_back(model);
    } else {
      candidates.push_back(scenario_dir / model);
      candidates.push_back(fs::current_path() / model);
    }
  } else {
    const std::string file = model + ".yaml";
    candidates.push_back(scenario_dir / "models" / file);
    candidates.push_back(scenario_dir / ".." / "configs" / "models" / file);
    candidates.push_back(fs::current_path() / "configs" / "models" / file);
#ifdef COLLIDE_MODELS_DIR
    candidates.push_back(fs::path(COLLIDE_MODELS_DIR) / file);
#endif
  }
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  std::string tried;
  for (const fs::path& p : candidates) tried += (tried.empty() ? "" : ", ") + p.lexically_normal().string();
  return not_found(fmt::format("no model spec '{}' (looked for {})", model, tried));
}

Result<v1::ModelSpec> synth_model_spec(const v1::Synth& synth, uint32_t iterations) {
  traces::synth::SpecOverrides o;
  o.tp = nonzero(synth.tp());
  o.pp = nonzero(synth.pp());
  o.dp = nonzero(synth.dp());
  o.ep = nonzero(synth.ep());
  o.virtual_pipeline_stages = nonzero(synth.vpp());
  if (synth.has_zero_stage()) o.zero_stage = synth.zero_stage();
  o.micro_batch_size = nonzero(synth.micro_batch());
  o.global_batch_size = nonzero(synth.global_batch());
  if (iterations > 0) o.iterations = iterations;
  if (synth.has_sequence_parallel()) o.sequence_parallel = synth.sequence_parallel();
  o.dp_bucket_bytes = nonzero(synth.bucket_bytes());
  auto spec = traces::synth::load_model_spec(synth.model(), o);
  if (!spec.ok()) return spec.status();
  v1::ModelArchitecture& m = *spec->mutable_model();
  if (synth.layers() > 0 && synth.layers() < m.layers()) {
    // Parameters are spread evenly over layers, so keeping k of L layers keeps k/L of them.
    const double keep = static_cast<double>(synth.layers()) / m.layers();
    m.set_parameters(static_cast<uint64_t>(std::llround(static_cast<double>(m.parameters()) * keep)));
    m.set_expert_parameters(
        static_cast<uint64_t>(std::llround(static_cast<double>(m.expert_parameters()) * keep)));
    m.set_layers(synth.layers());
  }
  if (synth.sequence_length() > 0) m.set_sequence_length(synth.sequence_length());
  COLLIDE_RETURN_IF_ERROR(traces::synth::validate(*spec, synth.model() + " (with the scenario's workload.synth)"));
  return spec;
}

}  // namespace collide::orchestrator
