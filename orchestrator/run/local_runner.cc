#include "orchestrator/run/local_runner.h"

#include <net/if.h>

#include <chrono>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/netns.h"
#include "common/process.h"
#include "injectors/roce_drop.h"
#include "orchestrator/run/workload.h"
#include "orchestrator/testbed/virtual_testbed.h"
#include "traces/op_types.h"

namespace collide::orchestrator {
namespace {

using namespace std::chrono_literals;
namespace tb = testbed;

struct Run {
  std::string name;
  std::vector<const v1::Fault*> faults;
  v1::TransportSettings transport;
  uint32_t repetition = 0;
};

// The variant's transport: the scenario's, with every field the variant sets taking its place
// (proto3 merging copies exactly the fields that differ from their defaults).
v1::TransportSettings merged(const v1::TransportSettings& base, const v1::TransportSettings& over) {
  v1::TransportSettings t = base;
  t.MergeFrom(over);
  return t;
}

std::vector<Run> plan_runs(const v1::Scenario& s) {
  std::vector<Run> runs;
  const uint32_t reps = std::max(1u, s.runs().repetitions());
  for (uint32_t rep = 0; rep < reps; ++rep) {
    if (s.runs().baseline()) runs.push_back({"baseline", {}, s.transport(), rep});
    for (const v1::Variant& v : s.runs().variants()) {
      Run r{v.name(), {}, merged(s.transport(), v.transport()), rep};
      for (const std::string& name : v.faults()) {
        for (const v1::Fault& f : s.faults()) {
          if (f.name() == name) r.faults.push_back(&f);
        }
      }
      runs.push_back(std::move(r));
    }
  }
  return runs;
}

// The fault's hook: the leaf port facing the host named by `link` ("h1"), egress for frames
// going to the host, ingress for frames leaving it. Loss on a middle node, as on a fabric.
Result<std::pair<std::string, std::string>> leaf_port_of(const tb::TestbedPlan& plan,
                                                         const std::string& link) {
  const std::string host = link.substr(0, link.find('.'));
  for (const tb::PlannedLink& l : plan.links) {
    if (l.a.netns == plan.name + "-" + host) return std::make_pair(l.b.netns, l.b.ifname);
  }
  return not_found(fmt::format("no link for '{}' in testbed {}", link, plan.name));
}

struct ArmedFault {
  const v1::Fault* fault;
  std::unique_ptr<injectors::RoceDrop> drop;
};

Result<std::vector<ArmedFault>> arm(const std::vector<const v1::Fault*>& faults,
                                    const tb::TestbedPlan& plan, uint32_t repetition) {
  std::vector<ArmedFault> armed;
  for (const v1::Fault* f : faults) {
    if (f->kind() != v1::Fault::KIND_LOSS) {
      return unavailable(fmt::format("fault {}: the embedded runner injects loss only so far",
                                     f->name()));
    }
    if (f->start_ns() != 0 || f->duration_ns() != 0) {
      return unavailable(fmt::format("fault {}: time windows are not supported by the embedded "
                                     "runner yet; the fault lasts the whole run", f->name()));
    }
    auto port = leaf_port_of(plan, f->link());
    if (!port.ok()) return port.status();
    // Each repetition draws other packets; the same repetition the same ones.
    auto drop = injectors::RoceDrop::load(f->probability(), f->seed() + repetition);
    if (!drop.ok()) return drop.status();
    const auto directions =
        f->direction() == v1::Fault::DIRECTION_BOTH
            ? std::vector<injectors::Direction>{injectors::Direction::kEgress, injectors::Direction::kIngress}
            : std::vector<injectors::Direction>{f->direction() == v1::Fault::DIRECTION_TO_HOST
                                                    ? injectors::Direction::kEgress
                                                    : injectors::Direction::kIngress};
    {
      // Attach from inside the leaf's namespace; the links stay when we leave it.
      auto scope = netns::Scope::enter(port->first);
      if (!scope.ok()) return scope.status().with_context("arming fault " + f->name());
      const int ifindex = static_cast<int>(if_nametoindex(port->second.c_str()));
      for (injectors::Direction d : directions) COLLIDE_RETURN_IF_ERROR((*drop)->attach(ifindex, d));
    }
    armed.push_back({f, std::move(drop).value()});
  }
  return armed;
}

report::RunResult read_results(const Run& run, const std::vector<std::string>& files,
                               uint32_t world) {
  report::RunResult result;
  result.variant = run.name;
  result.repetition = run.repetition;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in.good()) {
      result.failed = true;
      result.failure += fmt::format("{}: no results (the host's replay did not finish); ", file);
      continue;
    }
    const auto j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) {
      result.failed = true;
      result.failure += file + ": unreadable results; ";
      continue;
    }
    if (!j.value("ok", false)) {
      result.failed = true;
      result.failure += j.value("failure", std::string("failed")) + "; ";
    }
    for (const auto& op : j["ops"]) {
      report::OpTiming t;
      t.rank = op["rank"];
      t.op_index = op["op_index"];
      t.kind = traces::parse_op_kind(op["kind"].get<std::string>()).value();
      t.comm = op["comm"];
      t.comm_size = world;
      t.bytes = op["bytes"];
      t.start_ns = op["start_ns"];
      t.end_ns = op["end_ns"];
      t.failed = op["failed"];
      result.ops.push_back(t);
    }
    const auto& c = j["counters"];
    result.packets_sent += c.value("packets_sent", uint64_t{0});
    result.retransmitted_packets += c.value("retransmitted_packets", uint64_t{0});
    result.timeouts += c.value("timeouts", uint64_t{0});
  }
  return result;
}

}  // namespace

Result<std::vector<report::RunResult>> run_locally(const v1::Scenario& s,
                                                   const LocalRunOptions& o) {
  auto progress = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  if (s.testbed().agents_size() > 0) {
    return unavailable("remote agents are not supported yet: use a virtual testbed");
  }
  const v1::VirtualTestbedSpec& spec = s.testbed().virtual_();
  if (spec.nics_per_host() != 1) return unavailable("the embedded runner drives one NIC per host so far");
  const uint32_t hosts = spec.hosts();
  const uint32_t per_host = s.testbed().ranks_per_host();
  const uint32_t world = hosts * per_host;
  std::filesystem::create_directories(o.work_dir);

  auto trace = prepare_workload(s, world, o.work_dir);
  if (!trace.ok()) return trace.status();
  auto plan = tb::plan_testbed(spec);
  if (!plan.ok()) return plan.status();
  progress(fmt::format("building testbed {}: {} hosts, {} leaves, {} spines", spec.name(), hosts,
                       spec.leaves(), spec.spines()));
  auto bed = tb::VirtualTestbed::create(*plan);
  if (!bed.ok()) return bed.status();

  std::vector<report::RunResult> results;
  const std::vector<Run> runs = plan_runs(s);
  for (size_t n = 0; n < runs.size(); ++n) {
    const Run& run = runs[n];
    auto armed = arm(run.faults, *plan, run.repetition);
    if (!armed.ok()) return armed.status();
    const v1::TransportSettings& t = run.transport;
    const std::string go = (o.work_dir / fmt::format("go-{}", n)).string();
    std::vector<process::ChildProcess> replays;
    std::vector<std::string> files;
    for (uint32_t h = 0; h < hosts; ++h) {
      std::vector<std::string> ranks;
      for (uint32_t r = h * per_host; r < (h + 1) * per_host; ++r) ranks.push_back(std::to_string(r));
      const tb::HostNic& nic = plan->nics[h];
      files.push_back((o.work_dir / fmt::format("run-{}-host-{}.json", n, h)).string());
      std::filesystem::remove(files.back());
      auto child = process::ChildProcess::spawn(
          {o.collide_binary, "--log-level=warn", "replay", *trace,
           "--ranks=" + fmt::format("{}", fmt::join(ranks, ",")),
           "--ranks-per-host=" + std::to_string(per_host),
           "--nics-per-host=" + std::to_string(spec.nics_per_host()),
           "--port=dpdk:net_af_xdp" + std::to_string(h) + ",iface=" + nic.ifname,
           "--netns=" + nic.netns, "--lcore=" + std::to_string(h % 2),
           "--rank-addresses=testbed", "--next-hop-mac=" + nic.gateway_mac,
           "--mtu=" + std::to_string(t.mtu_bytes() ? t.mtu_bytes() : 1024),
           std::string("--recovery=") +
               (t.recovery() == v1::TransportSettings::RECOVERY_SELECTIVE_REPEAT ? "selective-repeat" : "go-back-n"),
           "--channels=" + std::to_string(t.channels() ? t.channels() : 2),
           "--qps=" + std::to_string(t.qps_per_connection() ? t.qps_per_connection() : 1),
           "--slice-bytes=" + std::to_string(t.slice_bytes() ? t.slice_bytes() : 1 << 20),
           "--timeout-exponent=" + std::to_string(t.timeout_exponent() ? t.timeout_exponent() : 14),
           "--retry-count=" + std::to_string(t.retry_count() ? t.retry_count() : 7),
           std::string("--algorithm=") + (t.all_reduce() == v1::TransportSettings::ALL_REDUCE_TREE ? "tree" : "ring"),
           "--max-outstanding=256", "--results=" + files.back(), "--wait-for-file=" + go,
           "--timeout=" + std::to_string(static_cast<int>(o.run_timeout_s))});
      if (!child.ok()) return child.status();
      replays.push_back(std::move(child).value());
    }
    for (auto& r : replays) {
      auto line = r.read_line(60s);
      if (!line.ok() || line->rfind("ready", 0) != 0) {
        return unavailable(fmt::format("a replay did not start: {}",
                                       line.ok() ? *line : line.status().message()));
      }
    }
    progress(fmt::format("run {}/{}: {} (repetition {})", n + 1, runs.size(), run.name,
                         run.repetition + 1));
    std::ofstream(go).close();
    for (auto& r : replays) {
      (void)r.wait(std::chrono::seconds(static_cast<int>(o.run_timeout_s) + 30));
    }
    std::filesystem::remove(go);
    report::RunResult result = read_results(run, files, world);
    for (const ArmedFault& a : *armed) {
      report::FaultWindow w;
      w.name = a.fault->name();
      w.kind = "loss";
      if (auto c = a.drop->counts(); c.ok()) {
        w.packets_matched = c->matched;
        w.packets_acted = c->dropped;
      }
      if (!result.ops.empty()) {
        w.start_ns = result.ops.front().start_ns;
        for (const auto& op : result.ops) {
          w.start_ns = std::min(w.start_ns, op.start_ns);
          w.end_ns = std::max(w.end_ns, op.end_ns);
        }
      }
      result.faults.push_back(w);
    }
    if (result.failed) progress(fmt::format("  failed: {}", result.failure));
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace collide::orchestrator
