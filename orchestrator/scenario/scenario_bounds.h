#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collide/scenario.pb.h"
#include "common/yaml_proto.h"

// A scenario's sizes and counts against collide's limits (common/input_limits.h), and values that
// would run as something other than what was written: checked at load, before anything is built.
namespace collide::orchestrator {

// A field (as written in the YAML, "runs.repetitions") and what is wrong with it.
struct BoundsProblem {
  std::string field;
  std::string what;
};

// Fields where 0 stands for "the default" when left out, written as 0: a testbed of no hosts is a
// slip, not a request for the default. `lines` tells which fields were written.
std::optional<BoundsProblem> written_zero_problem(const v1::Scenario& as_written, const config::FieldLines& lines);

// Sizes, counts and settings that fit no run: repetitions, iterations (and iterations given with a
// trace, which replays its own), ranks per host, op sizes, transport settings the replay would
// refuse, a name that would put results outside their folder, an output folder that is a file.
std::optional<BoundsProblem> bounds_problem(const v1::Scenario& s);
// The same for one workload (the scenario's, or a job's: its fields then read "workload...").
std::optional<BoundsProblem> workload_bounds_problem(const v1::Workload& w);

// What the whole scenario keeps in memory: `ops_per_run` op records (ops of every rank; the
// trace's, or what the workload generates) in every run. `ops_field` names the field they come from.
std::optional<BoundsProblem> records_problem(const v1::Scenario& s, uint64_t ops_per_run, const std::string& ops_field);

// Ops per run of a generated workload (collectives, incast) of `world` ranks; nullopt for a trace
// or a synthesized job, whose ops are counted when they are read.
std::optional<uint64_t> generated_ops_per_run(const v1::Workload& w, uint32_t world);

}  // namespace collide::orchestrator
