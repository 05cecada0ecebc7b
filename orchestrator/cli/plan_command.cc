// `collide plan`: expands a trace for a placement, without running it, and prints what each rank
// and each collective puts on the network and how much each pair of hosts exchanges.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/units.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/plan_sweep.h"
#include "orchestrator/replay/transport_options.h"
#include "replayer/collectives/expander.h"
#include "replayer/collectives/plan_summary.h"
#include "traces/op_types.h"
#include "traces/trace_io.h"

namespace collide::cli {
namespace {

namespace coll = replayer::collectives;

struct PlanOptions {
  std::string trace;
  uint32_t ranks_per_host = 8;
  uint32_t nics_per_host = 0;  // 0: one per rank
  v1::TransportSettings transport;  // what is left at 0 takes the one default
  std::string slice;                 // "512KiB", "1MB", "65536"
  std::string algorithm = "ring";
  std::string ring_order = "rank";
  uint32_t leaves = 0;  // 0: not known; else host h under leaf h % leaves (the virtual testbed's cabling)
  bool per_op = false;
  int64_t only_rank = -1;
  bool json = false;
};

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", value, units[unit]);
}

nlohmann::json op_json(const coll::OpPlan& p) {
  return {{"rank", p.rank},         {"op_index", p.op_index},
          {"kind", std::string(traces::op_kind_name(p.kind))},
          {"comm", p.comm},         {"comm_size", p.comm_size},
          {"bytes", p.bytes},       {"network_sent_bytes", p.network_sent},
          {"local_sent_bytes", p.local_sent}, {"pxn_relayed_bytes", p.pxn_relayed},
          {"steps", p.steps},
          {"busbw_factor", p.busbw_factor}};
}

// Bytes between hosts under different leaves: what climbs to the spines (one NIC per host).
uint64_t between_leaves(const coll::PlanSummary& summary, const coll::Placement& placement) {
  uint64_t bytes = 0;
  for (const auto& [pair, sent] : summary.host_pairs()) {
    if (placement.leaf_of_host[pair.first] != placement.leaf_of_host[pair.second]) bytes += sent;
  }
  return bytes;
}

void run_plan(const PlanOptions& opt) {
  auto reader = traces::TraceReader::open(opt.trace);
  if (!reader.ok()) fail("plan", kExitUsage, reader.status().message());
  const v1::TraceHeader& header = (*reader)->header();
  if (header.world_size() == 0) fail("plan", kExitUsage, opt.trace + ": the trace has no ranks");

  auto placement = coll::Placement::uniform(
      header.world_size(), opt.ranks_per_host,
      opt.nics_per_host == 0 ? opt.ranks_per_host : opt.nics_per_host);
  if (!placement.ok()) fail("plan", kExitUsage, placement.status().message());
  for (uint32_t h = 0; opt.leaves > 0 && h < placement->host_count(); ++h) {
    placement->leaf_of_host.push_back(h % opt.leaves);
  }
  v1::TransportSettings settings = opt.transport;
  settings.set_ring_order(opt.ring_order == "topology" ? v1::TransportSettings::RING_ORDER_TOPOLOGY
                                                       : v1::TransportSettings::RING_ORDER_RANK);
  if (!opt.slice.empty()) {
    auto slice = units::parse_bytes(opt.slice);
    if (!slice.ok()) fail("plan", kExitUsage, "--slice-bytes: " + slice.status().message());
    settings.set_slice_bytes(*slice);
  }
  settings.set_all_reduce(opt.algorithm == "tree" ? v1::TransportSettings::ALL_REDUCE_TREE
                                                  : v1::TransportSettings::ALL_REDUCE_RING);
  auto resolved = orchestrator::replay::resolve_transport(settings);
  if (!resolved.ok()) fail("plan", kExitUsage, resolved.status().message());
  const coll::ExpandOptions& options = resolved->expand;
  if (options.ring_order == coll::RingOrder::kTopology && opt.leaves == 0) {
    fail("plan", kExitUsage, "--ring-order topology groups hosts by leaf: give --leaves");
  }
  auto expander = coll::Expander::create(header, *placement, options);
  if (!expander.ok()) fail("plan", kExitUsage, opt.trace + ": " + expander.status().message());

  std::unordered_map<std::string, uint32_t> comm_sizes;
  for (const auto& c : header.communicators()) comm_sizes[c.id()] = c.ranks_size();

  coll::PlanSummary summary(header.world_size());
  nlohmann::json ops = nlohmann::json::array();
  if (opt.per_op && !opt.json) {
    std::cout << fmt::format("{:>6} {:>8} {:<15} {:<12} {:>5} {:>12} {:>12} {:>12} {:>7} {:>6}\n",
                             "rank", "op", "kind", "comm", "n", "bytes", "network", "local",
                             "steps", "busbw");
  }
  v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    if (!more.ok()) fail("plan", kExitFailed, more.status().message());
    if (!*more) break;
    if (op.rank() >= header.world_size()) {
      fail("plan", kExitUsage, fmt::format("{}: op {} names rank {} of a {}-rank trace", opt.trace,
                                   op.index(), op.rank(), header.world_size()));
    }
    auto expanded = expander->expand(op);
    if (!expanded.ok()) fail("plan", kExitUsage, opt.trace + ": " + expanded.status().message());
    const coll::OpPlan line = summary.add(op, comm_sizes[op.comm()], *expanded, *placement);
    if (!opt.per_op || (opt.only_rank >= 0 && op.rank() != opt.only_rank)) continue;
    if (opt.json) {
      ops.push_back(op_json(line));
    } else {
      std::cout << fmt::format("{:>6} {:>8} {:<15} {:<12} {:>5} {:>12} {:>12} {:>12} {:>7} {:>6.3f}\n",
                               line.rank, line.op_index, traces::op_kind_name(line.kind),
                               line.comm, line.comm_size, line.bytes, line.network_sent,
                               line.local_sent, line.steps, line.busbw_factor);
    }
  }

  if (opt.json) {
    nlohmann::json out;
    out["trace"] = opt.trace;
    out["placement"] = {{"ranks_per_host", opt.ranks_per_host},
                        {"hosts", placement->host_count()}};
    out["options"] = {{"channels", options.channels}, {"slice_bytes", options.slice_bytes},
                      {"qps_per_connection", options.qps_per_connection}, {"all_reduce", opt.algorithm},
                      {"pxn", options.pxn}};
    nlohmann::json ranks = nlohmann::json::array();
    for (uint32_t r = 0; r < summary.ranks().size(); ++r) {
      const coll::RankTotals& t = summary.ranks()[r];
      ranks.push_back({{"rank", r}, {"host", placement->host_of_rank[r]}, {"ops", t.ops},
                       {"steps", t.steps}, {"network_sent_bytes", t.network_sent},
                       {"network_received_bytes", t.network_received},
                       {"local_sent_bytes", t.local_sent},
                       {"pxn_relayed_bytes", t.pxn_relayed}});
    }
    out["ranks"] = std::move(ranks);
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& [pair, bytes] : summary.host_pairs()) {
      pairs.push_back({{"from_host", pair.first}, {"to_host", pair.second}, {"bytes", bytes}});
    }
    out["host_pairs"] = std::move(pairs);
    out["total_network_bytes"] = summary.total_network_bytes();
    if (opt.leaves > 0) out["between_leaves_bytes"] = between_leaves(summary, *placement);
    out["total_pxn_relayed_bytes"] = summary.total_pxn_relayed_bytes();
    if (opt.per_op) out["ops"] = std::move(ops);
    std::cout << out.dump(2) << "\n";
    return;
  }

  std::cout << fmt::format("\nPer rank ({} ranks on {} hosts, {} per host)\n",
                           header.world_size(), placement->host_count(), opt.ranks_per_host);
  std::cout << fmt::format("{:>6} {:>5} {:>8} {:>10} {:>14} {:>14} {:>14}\n", "rank", "host",
                           "ops", "steps", "net sent", "net received", "local sent");
  for (uint32_t r = 0; r < summary.ranks().size(); ++r) {
    if (opt.only_rank >= 0 && r != opt.only_rank) continue;
    const coll::RankTotals& t = summary.ranks()[r];
    std::cout << fmt::format("{:>6} {:>5} {:>8} {:>10} {:>14} {:>14} {:>14}\n", r,
                             placement->host_of_rank[r], t.ops, t.steps,
                             human_bytes(t.network_sent), human_bytes(t.network_received),
                             human_bytes(t.local_sent));
  }
  std::cout << "\nPer host pair (bytes sent over the network)\n";
  std::cout << fmt::format("{:>9} {:>9} {:>14}\n", "from", "to", "bytes");
  for (const auto& [pair, bytes] : summary.host_pairs()) {
    std::cout << fmt::format("{:>9} {:>9} {:>14}\n", pair.first, pair.second, human_bytes(bytes));
  }
  std::cout << fmt::format("\nTotal over the network: {} ({} bytes)\n",
                           human_bytes(summary.total_network_bytes()),
                           summary.total_network_bytes());
  if (opt.leaves > 0) {
    const uint64_t crossing = between_leaves(summary, *placement);
    std::cout << fmt::format("  of which between hosts under different leaves (over the spines): {} "
                             "({} bytes)\n", human_bytes(crossing), crossing);
  }
  if (options.pxn) {
    std::cout << fmt::format("  of which relayed by PXN (sent for a host-mate on another rail): "
                             "{} ({} bytes)\n",
                             human_bytes(summary.total_pxn_relayed_bytes()),
                             summary.total_pxn_relayed_bytes());
  }
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto opt = std::make_shared<PlanOptions>();
  CLI::App* plan = app.add_subcommand(
      "plan", "Expand a trace into the flows each rank puts on the wire, without running it");
  plan->add_option("trace", opt->trace,
                   "collide trace file, or a scenario (.yaml): then the points of its sweep are listed")
      ->required();
  plan->add_option("--ranks-per-host", opt->ranks_per_host, "consecutive ranks per host")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  plan->add_option("--nics-per-host", opt->nics_per_host,
                   "NICs (rails) per host; rank i uses NIC i mod this (default: one per rank)");
  using D = orchestrator::replay::TransportDefaults;
  v1::TransportSettings& t = opt->transport;
  plan->add_option_function<uint32_t>("--channels", [&t](uint32_t n) { t.set_channels(n); },
                                      fmt::format("NCCL channels the buffer is split across (default {})",
                                                  D::kChannels))
      ->check(CLI::Range(1u, 64u));
  plan->add_option("--slice-bytes", opt->slice,
                   fmt::format("pipelining slice size, e.g. 512KiB or 1MB (KB = 1000 B, KiB = 1024 B; "
                               "default {})", D::kSliceBytes));
  plan->add_option_function<uint32_t>("--qps", [&t](uint32_t n) { t.set_qps_per_connection(n); },
                                      fmt::format("queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION; "
                                                  "default {})", D::kQpsPerConnection))
      ->check(CLI::Range(1u, 256u));
  plan->add_option("--algorithm", opt->algorithm, "all-reduce algorithm")
      ->check(CLI::IsMember({"ring", "tree"}))
      ->capture_default_str();
  plan->add_flag_function(
      "--no-pxn", [&t](int64_t) { t.set_pxn_disable(true); },
      "send cross-rail transfers from the sender's own NIC (NCCL_PXN_DISABLE=1; default: PXN "
      "relays them through the host-mate on the receiver's rail)");
  plan->add_option("--ring-order", opt->ring_order,
                   "order of a ring's hosts when the trace recorded none: rank, or topology (hosts "
                   "under one leaf together; needs --leaves)")
      ->check(CLI::IsMember({"rank", "topology"}))
      ->capture_default_str();
  plan->add_option("--leaves", opt->leaves,
                   "leaves of the fabric, host h under leaf h mod this (as the virtual testbed "
                   "cables one-NIC hosts): also counts the bytes between leaves")
      ->check(CLI::Range(1u, 4096u));
  plan->add_flag("--ops", opt->per_op, "also print one line per op");
  plan->add_option("--rank", opt->only_rank, "only this rank's lines");
  plan->add_flag("--json", opt->json, "print JSON instead of tables");
  plan->callback([opt] {
    const std::filesystem::path input(opt->trace);
    if (input.extension() == ".yaml" || input.extension() == ".yml") {
      plan_scenario_grid(opt->trace, opt->json);
      return;
    }
    run_plan(*opt);
  });
}

}  // namespace collide::cli
