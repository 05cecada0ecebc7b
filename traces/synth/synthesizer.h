#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "collide/model.pb.h"
#include "collide/trace.pb.h"
#include "common/result.h"

// Writes a synthetic trace: the header (model, parallelism, communicators), then every rank's ops,
// rank 0 first, each generated and written one at a time so memory stays flat at any scale.
namespace collide::traces::synth {

inline constexpr const char* kSynthesizerVersion = "collide-synth 1";

// The header of the trace `spec` describes (spec validated).
v1::TraceHeader make_header(const v1::ModelSpec& spec);

// Ops and bytes by the kind of group that issued them.
enum class GroupKind : uint8_t { kTp, kDp, kPp, kEp, kEdp, kCount };
const char* group_kind_name(GroupKind kind);
// The group kind of a communicator id the synthesizer made ("tp3", "edp0", ...).
GroupKind group_kind_of(const std::string& comm);

struct SynthReport {
  uint32_t ranks = 0;
  uint64_t ops = 0;
  uint64_t bytes = 0;  // sum of Op.bytes
  std::array<uint64_t, static_cast<size_t>(GroupKind::kCount)> ops_by_group{};
  std::array<uint64_t, static_cast<size_t>(GroupKind::kCount)> bytes_by_group{};
};

// Called after each rank with the ranks done so far and the job's rank count.
using SynthProgress = std::function<void(uint32_t done, uint32_t total)>;

// Generates the whole trace into `path` ("-" for stdout). `spec` must have passed validate().
Result<SynthReport> synthesize(const v1::ModelSpec& spec, const std::string& path,
                               const SynthProgress& progress = {});

}  // namespace collide::traces::synth
