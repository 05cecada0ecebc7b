#include "traces/analysis/stats_report.h"

#include <fmt/format.h>

#include "traces/op_types.h"

namespace collide::traces::analysis {
namespace {

double gb(double bytes) {
  return bytes / 1e9;
}
double gb(uint64_t bytes) {
  return static_cast<double>(bytes) / 1e9;
}

constexpr const char* kModels =
    "Traffic (GB = 1e9 bytes sent, each byte counted once; a collective counted once per\n"
    "communicator instance, not once per rank that issues it):\n"
    "  full-mesh GB  the articles' model: every rank sends its whole buffer to every other rank\n"
    "                of the communicator (all-reduce n(n-1)S, all-gather and reduce-scatter\n"
    "                n(n-1) chunks, rooted collectives (n-1)S, a send S)\n"
    "  NCCL GB       what NCCL's algorithms put on the wire (ring all-reduce 2(n-1)/n of S per\n"
    "                rank, all-gather and reduce-scatter (n-1) chunks per rank, a send S)\n"
    "  issued GB     sum of Op.bytes over every rank's op records (no traffic model)\n";

std::string totals_columns(const TrafficTotals& t) {
  return fmt::format("{:>12} {:>12} {:>14.3f} {:>14.3f} {:>14.3f}", t.issued_ops, t.instances,
                     gb(t.issued_bytes), gb(t.full_mesh_bytes), gb(t.nccl_bytes));
}

std::string totals_header(const std::string& first, int width) {
  return fmt::format("{:<{}} {:>12} {:>12} {:>14} {:>14} {:>14}\n", first, width, "issued ops",
                     "instances", "issued GB", "full-mesh GB", "NCCL GB");
}

nlohmann::json totals_json(const TrafficTotals& t) {
  return {{"issued_ops", t.issued_ops},
          {"instances", t.instances},
          {"issued_bytes", t.issued_bytes},
          {"full_mesh_bytes", t.full_mesh_bytes},
          {"nccl_bytes", t.nccl_bytes}};
}

}  // namespace

std::string stats_table(const TraceStats& stats, const StatsReportOptions& options) {
  std::string out;
  out +=
      fmt::format("{} ranks, {} communicators, {} ops issued, {} iterations\n\n", stats.world_size,
                  stats.by_communicator.size(), stats.job.issued_ops, stats.by_iteration.size());
  out += kModels;
  out += "\nBy op kind\n";
  out += totals_header("kind", 16);
  for (const auto& [kind, totals] : stats.by_kind) {
    out += fmt::format("{:<16} {}\n", op_kind_name(kind), totals_columns(totals));
  }
  out += "\nBy communicator\n";
  out += totals_header("communicator (ranks)", 28);
  uint32_t comms_shown = 0;
  for (const CommunicatorStats& c : stats.by_communicator) {
    if (comms_shown++ == options.max_communicator_rows) {
      out += fmt::format("... {} more communicators (--json lists all)\n",
                         stats.by_communicator.size() - options.max_communicator_rows);
      break;
    }
    std::string label = c.name.empty() || c.name == c.id ? c.id : c.id + " " + c.name;
    label = fmt::format("{} ({})", label, c.size);
    out += fmt::format("{:<28} {}\n", label, totals_columns(c.totals));
  }
  out += "\nBy iteration\n";
  out += totals_header("iteration", 12);
  uint32_t shown = 0;
  for (const auto& [iteration, totals] : stats.by_iteration) {
    if (shown++ == options.max_iteration_rows) {
      out += fmt::format("... {} more iterations (--json lists all)\n",
                         stats.by_iteration.size() - options.max_iteration_rows);
      break;
    }
    out += fmt::format("{:<12} {}\n", iteration, totals_columns(totals));
  }
  out += "\n";
  out += totals_header("job", 12);
  out += fmt::format("{:<12} {}\n", "total", totals_columns(stats.job));
  if (options.minibatches_per_epoch) {
    const EpochTotals e = project_to_epoch(stats, *options.minibatches_per_epoch);
    out += fmt::format(
        "\nPer epoch of {} mini-batches (the mean of the trace's {} iterations, times {}):\n"
        "  issued {:.3f} GB   full-mesh {:.3f} GB   NCCL {:.3f} GB\n",
        e.minibatches, e.iterations_in_trace, e.minibatches, gb(e.issued_bytes),
        gb(e.full_mesh_bytes), gb(e.nccl_bytes));
  }
  if (stats.ops_unaccounted > 0) {
    out += fmt::format(
        "\nwarning: {} ops name an undeclared communicator or come from a rank outside it; their "
        "collective traffic is not counted (see `collide trace validate`)\n",
        stats.ops_unaccounted);
  }
  if (stats.overflowed) out += "\nwarning: a byte total passed 2^64 - 1 and is held there\n";
  out += frontier_table(stats.frontier);
  return out;
}

nlohmann::json stats_json(const TraceStats& stats, const StatsReportOptions& options) {
  nlohmann::json j;
  j["units"] = "bytes";
  j["models"] = {
      {"full_mesh", "every rank sends its whole buffer to every other rank of the communicator"},
      {"nccl", "bytes NCCL's algorithms (ring, tree, pairwise) put on the wire"},
      {"issued", "sum of Op.bytes over every rank's op records"}};
  j["world_size"] = stats.world_size;
  j["iterations"] = stats.by_iteration.size();
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& [kind, totals] : stats.by_kind) {
    nlohmann::json row = totals_json(totals);
    row["kind"] = std::string(op_kind_name(kind));
    kinds.push_back(std::move(row));
  }
  j["by_kind"] = std::move(kinds);
  nlohmann::json comms = nlohmann::json::array();
  for (const CommunicatorStats& c : stats.by_communicator) {
    nlohmann::json row = totals_json(c.totals);
    row["id"] = c.id;
    row["name"] = c.name;
    row["size"] = c.size;
    comms.push_back(std::move(row));
  }
  j["by_communicator"] = std::move(comms);
  nlohmann::json iterations = nlohmann::json::array();
  for (const auto& [iteration, totals] : stats.by_iteration) {
    nlohmann::json row = totals_json(totals);
    row["iteration"] = iteration;
    iterations.push_back(std::move(row));
  }
  j["by_iteration"] = std::move(iterations);
  j["job"] = totals_json(stats.job);
  if (options.minibatches_per_epoch) {
    const EpochTotals e = project_to_epoch(stats, *options.minibatches_per_epoch);
    j["epoch"] = {{"minibatches", e.minibatches},
                  {"iterations_in_trace", e.iterations_in_trace},
                  {"issued_bytes", e.issued_bytes},
                  {"full_mesh_bytes", e.full_mesh_bytes},
                  {"nccl_bytes", e.nccl_bytes}};
  }
  j["ops_unaccounted"] = stats.ops_unaccounted;
  j["overflowed"] = stats.overflowed;
  if (stats.frontier.has_states) j["hang_frontier"] = frontier_json(stats.frontier);
  return j;
}

}  // namespace collide::traces::analysis
