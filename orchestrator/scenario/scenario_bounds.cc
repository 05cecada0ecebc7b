#include "orchestrator/scenario/scenario_bounds.h"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/format.h>

#include "common/input_limits.h"
#include "orchestrator/replay/transport_options.h"
#include "replayer/engine/entropy_port.h"

namespace collide::orchestrator {
namespace {

std::string above(uint64_t value, uint64_t limit) {
  return fmt::format("{} is above the limit of {} (common/input_limits.h)", value, limit);
}

std::optional<BoundsProblem> transport_field_problem(const v1::TransportSettings& t, const std::string& at) {
  if (auto p = replay::transport_problem(t)) {
    return BoundsProblem{p->field.empty() ? at : at + "." + p->field, p->what};
  }
  return std::nullopt;
}

}  // namespace

std::optional<BoundsProblem> written_zero_problem(const v1::Scenario& s, const config::FieldLines& lines) {
  const v1::VirtualTestbedSpec& v = s.testbed().virtual_();
  const std::pair<const char*, double> counts[] = {
      {"testbed.virtual.hosts", v.hosts()},
      {"testbed.virtual.leaves", v.leaves()},
      {"testbed.virtual.nics_per_host", v.nics_per_host()},
      {"testbed.ranks_per_host", s.testbed().ranks_per_host()},
      {"workload.iterations", s.workload().iterations()},
      {"workload.bytes_scale", s.workload().bytes_scale()},
      {"runs.repetitions", s.runs().repetitions()},
      {"runs.duration_ns", static_cast<double>(s.runs().duration_ns())},
  };
  for (const auto& [field, value] : counts) {
    if (value == 0 && lines.count(field)) {
      return BoundsProblem{field, "0 does not run; leave the field out for its default"};
    }
  }
  return std::nullopt;
}

std::optional<BoundsProblem> bounds_problem(const v1::Scenario& s) {
  // The name is the default results folder's last part: one plain path component.
  static const std::regex kName("[A-Za-z0-9_][A-Za-z0-9_.-]*");
  if (!std::regex_match(s.name(), kName) || s.name() == "." || s.name() == "..") {
    return BoundsProblem{"name", fmt::format("'{}': letters, digits, '_', '.' and '-' only (it names the "
                                             "results folder)", s.name())};
  }
  std::error_code ec;
  const std::filesystem::path out = s.outputs().directory();
  if (std::filesystem::exists(out, ec) && !std::filesystem::is_directory(out, ec)) {
    return BoundsProblem{"outputs.directory", fmt::format("'{}' exists and is not a folder", out.string())};
  }
  if (s.runs().repetitions() > limits::kMaxRepetitions) {
    return BoundsProblem{"runs.repetitions", above(s.runs().repetitions(), limits::kMaxRepetitions)};
  }
  if (const uint32_t q = s.testbed().queues_per_nic(); q > 1) {
    if (s.testbed().agents_size() == 0) {
      return BoundsProblem{"testbed.queues_per_nic",
                           "engines per NIC need real hosts' DPDK NICs (agents): a virtual host's "
                           "veth has one queue"};
    }
    if (q > replayer::engine::kMaxSteeredLanes || (q & (q - 1)) != 0) {
      return BoundsProblem{"testbed.queues_per_nic",
                           fmt::format("{}: a power of two up to {} (the NICs' flow rules steer "
                                       "each QP by the low bits of its UDP source port)",
                                       q, replayer::engine::kMaxSteeredLanes)};
    }
  }
  if (s.testbed().ranks_per_host() > limits::kMaxRanksPerHost) {
    return BoundsProblem{"testbed.ranks_per_host", above(s.testbed().ranks_per_host(), limits::kMaxRanksPerHost)};
  }
  if (auto p = transport_field_problem(s.transport(), "transport")) return p;
  for (int i = 0; i < s.runs().variants_size(); ++i) {
    // A variant's settings count over the scenario's: judge them merged, name the variant's field.
    v1::TransportSettings merged = s.transport();
    merged.MergeFrom(s.runs().variants(i).transport());
    if (auto p = transport_field_problem(merged, fmt::format("runs.variants[{}].transport", i))) return p;
  }
  return std::nullopt;
}

std::optional<BoundsProblem> workload_bounds_problem(const v1::Workload& w) {
  if (!w.trace().empty() && w.iterations() > 1) {
    return BoundsProblem{"workload.iterations", "a trace replays the iterations it holds: iterations "
                                                "applies to synth, collectives and incast"};
  }
  if (w.iterations() > limits::kMaxIterations) {
    return BoundsProblem{"workload.iterations", above(w.iterations(), limits::kMaxIterations)};
  }
  if (w.has_collectives() && w.collectives().bytes() > limits::kMaxOpBytes) {
    return BoundsProblem{"workload.collectives.bytes", above(w.collectives().bytes(), limits::kMaxOpBytes)};
  }
  if (w.has_incast() && w.incast().bytes() > limits::kMaxOpBytes) {
    return BoundsProblem{"workload.incast.bytes", above(w.incast().bytes(), limits::kMaxOpBytes)};
  }
  return std::nullopt;
}

std::optional<uint64_t> generated_ops_per_run(const v1::Workload& w, uint32_t world) {
  const uint64_t iterations = std::max(1u, w.iterations());
  if (w.has_collectives()) return uint64_t{world} * iterations * std::max(1u, w.collectives().count());
  // Per incast, each sender sends once and the receiver receives once from each.
  if (w.has_incast()) return 2 * uint64_t{w.incast().senders()} * iterations * std::max(1u, w.incast().count());
  return std::nullopt;
}

std::optional<BoundsProblem> records_problem(const v1::Scenario& s, uint64_t ops_per_run, const std::string& ops_field) {
  if (ops_per_run > limits::kMaxOpsPerRun) {
    return BoundsProblem{ops_field, fmt::format("{} ops a run: {}", ops_per_run,
                                                above(ops_per_run, limits::kMaxOpsPerRun))};
  }
  const uint64_t runs = uint64_t{std::max(1u, s.runs().repetitions())} *
                        (uint64_t{s.runs().baseline()} + static_cast<uint64_t>(s.runs().variants_size()));
  if (runs * ops_per_run > limits::kMaxOpRecords) {
    return BoundsProblem{"runs.repetitions",
                         fmt::format("{} runs of {} ops keep {} op records: {}", runs, ops_per_run,
                                     runs * ops_per_run, above(runs * ops_per_run, limits::kMaxOpRecords))};
  }
  return std::nullopt;
}

}  // namespace collide::orchestrator
