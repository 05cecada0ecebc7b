#pragma once

#include <filesystem>
#include <string>

#include "collide/model.pb.h"
#include "collide/scenario.pb.h"
#include "common/result.h"

// A scenario's synthesized workload (workload.synth): where its model spec is, and the spec with
// the scenario's overrides applied, ready for traces::synth::synthesize.
namespace collide::orchestrator {

// A preset name ("llama3-70b") or a path to a model spec, resolved to an existing file: a path is
// taken relative to the scenario's folder, then to the working directory; a name is looked up in
// <scenario folder>/models, <scenario folder>/../configs/models, configs/models under the working
// directory, and the configs/models this collide was built from.
Result<std::string> resolve_model_spec(const std::string& model,
                                       const std::filesystem::path& scenario_dir);

// Loads `synth.model` (already resolved) with the overrides and `iterations`, keeps `layers`
// layers (scaling the parameter count with them) and sets the sequence length; the result has
// passed the synthesizer's validation, whose errors name the spec file and field.
Result<v1::ModelSpec> synth_model_spec(const v1::Synth& synth, uint32_t iterations);

}  // namespace collide::orchestrator
