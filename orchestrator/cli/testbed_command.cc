// `collide testbed up|down|show|list`: a virtual leaf-spine fabric of network namespaces.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "orchestrator/cli/commands.h"
#include "orchestrator/testbed/testbed_owner.h"
#include "orchestrator/testbed/topology_text.h"
#include "orchestrator/testbed/virtual_testbed.h"

namespace collide::cli {
namespace {

namespace tb = orchestrator::testbed;

struct TestbedOptions {
  v1::VirtualTestbedSpec spec;
  uint32_t hosts = 2;
  uint32_t nics = 1;
  uint32_t leaves = 2;
  uint32_t spines = 2;
  double host_gbps = 0;
  double fabric_gbps = 0;
  uint32_t pods = 0;
  uint32_t super_spines = 0;
  double super_gbps = 0;
  uint32_t planes = 0;
  uint32_t mtu = 0;
  bool bgp = false;            // --routing bgp
  uint32_t bfd_interval_ms = 0;  // 0: FRR's default
  uint32_t bfd_multiplier = 0;
  std::string name = "demo";
  bool json = false;
};

v1::VirtualTestbedSpec spec_of(const TestbedOptions& o) {
  v1::VirtualTestbedSpec s;
  s.set_name(o.name);
  s.set_hosts(o.hosts);
  s.set_nics_per_host(o.nics);
  s.set_leaves(o.leaves);
  s.set_spines(o.spines);
  s.set_host_link_gbps(o.host_gbps);
  s.set_fabric_link_gbps(o.fabric_gbps);
  s.set_pods(o.pods);
  s.set_super_spines(o.super_spines);
  s.set_super_link_gbps(o.super_gbps);
  s.set_planes(o.planes);
  s.set_mtu(o.mtu);
  if (o.bgp) s.set_routing(v1::VirtualTestbedSpec::ROUTING_BGP);
  if (o.bfd_interval_ms != 0) s.mutable_bgp()->set_bfd_interval_ns(uint64_t{o.bfd_interval_ms} * 1'000'000);
  if (o.bfd_multiplier != 0) s.mutable_bgp()->set_bfd_multiplier(o.bfd_multiplier);
  return s;
}

void print_plan(const tb::TestbedPlan& plan, bool json) {
  if (json) {
    nlohmann::json nics = nlohmann::json::array();
    for (const tb::HostNic& n : plan.nics) {
      nics.push_back({{"host", n.host}, {"nic", n.nic}, {"netns", n.netns}, {"ifname", n.ifname},
                      {"mac", n.mac}, {"gateway_mac", n.gateway_mac},
                      {"rank_subnet", n.rank_subnet}});
    }
    nlohmann::json namespaces = nlohmann::json::array();
    for (const auto& ns : plan.namespaces) namespaces.push_back(ns.name);
    std::cout << nlohmann::json{{"name", plan.name}, {"namespaces", namespaces}, {"nics", nics},
                                {"links", plan.links.size()}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << tb::topology_text(plan) << "\n";
  std::cout << fmt::format("{:<12} {:<7} {:<18} {:<18} {}\n", "host netns", "nic", "mac",
                           "gateway mac", "rank subnet");
  for (const tb::HostNic& n : plan.nics) {
    std::cout << fmt::format("{:<12} {:<7} {:<18} {:<18} {}\n", n.netns, n.ifname, n.mac,
                             n.gateway_mac, n.rank_subnet);
  }
}

void add_spec_options(CLI::App* cmd, TestbedOptions& o) {
  cmd->add_option("--name", o.name, "testbed name (1-6 lowercase letters/digits)")->capture_default_str();
  cmd->add_option("--hosts", o.hosts, "hosts")->capture_default_str();
  cmd->add_option("--nics", o.nics, "NICs (rails) per host")->capture_default_str();
  cmd->add_option("--leaves", o.leaves, "leaf switches")->capture_default_str();
  cmd->add_option("--spines", o.spines, "spine switches (0: one leaf only)")->capture_default_str();
  cmd->add_option("--host-gbps", o.host_gbps, "shape host links to this rate (0: unshaped)");
  cmd->add_option("--fabric-gbps", o.fabric_gbps, "shape leaf-spine links (0: unshaped)");
  cmd->add_option("--pods", o.pods, "3-tier: split the leaves and spines into this many pods");
  cmd->add_option("--super-spines", o.super_spines, "3-tier: super-spines joining the pods");
  cmd->add_option("--super-gbps", o.super_gbps, "shape spine - super-spine links (0: unshaped)");
  cmd->add_option("--planes", o.planes, "split the spines into planes, rail r's leaves on plane r % planes");
  cmd->add_option("--mtu", o.mtu, "MTU of every link (default 1500)");
  cmd->add_option_function<std::string>(
         "--routing", [&o](const std::string& r) { o.bgp = r == "bgp"; },
         "static (collide's own routes, the default) or bgp (FRR's bgpd with BFD in every switch)")
      ->check(CLI::IsMember({"static", "bgp"}));
  cmd->add_option("--bfd-interval-ms", o.bfd_interval_ms, "with --routing bgp: BFD's interval (default 300)");
  cmd->add_option("--bfd-multiplier", o.bfd_multiplier, "with --routing bgp: BFD's detect multiplier (default 3)");
  cmd->add_flag("--json", o.json, "print JSON");
}

}  // namespace

void add_testbed_command(CLI::App& app) {
  CLI::App* testbed = app.add_subcommand(
      "testbed", "A virtual leaf-spine fabric: hosts and switches as network namespaces");
  testbed->require_subcommand(1);

  auto up = std::make_shared<TestbedOptions>();
  CLI::App* up_cmd = testbed->add_subcommand("up", "Build a testbed and leave it running");
  add_spec_options(up_cmd, *up);
  up_cmd->callback([up] {
    auto plan = tb::plan_testbed(spec_of(*up));
    if (!plan.ok()) fail("testbed", kExitUsage, plan.status().message());
    auto built = tb::VirtualTestbed::create(*plan);
    if (!built.ok()) fail("testbed", kExitFailed, built.status().message());
    (*built)->keep();
    print_plan((*built)->plan(), up->json);
  });

  auto show = std::make_shared<TestbedOptions>();
  CLI::App* show_cmd = testbed->add_subcommand("show", "Print a testbed's plan (hosts, MACs, subnets)");
  add_spec_options(show_cmd, *show);
  show_cmd->callback([show] {
    auto plan = tb::plan_testbed(spec_of(*show));
    if (!plan.ok()) fail("testbed", kExitUsage, plan.status().message());
    print_plan(*plan, show->json);
  });

  auto down_name = std::make_shared<std::string>();
  auto down_force = std::make_shared<bool>(false);
  CLI::App* down = testbed->add_subcommand("down", "Remove a testbed (also a crashed run's)");
  down->add_option("name", *down_name, "testbed name")->required();
  down->add_flag("--force", *down_force, "remove it even while the run that built it still runs");
  down->callback([down_name, down_force] {
    if (!*down_force) {
      if (Status s = tb::may_take_down(*down_name); !s.ok()) {
        fail("testbed", kExitFailed, s.message() + " (or pass --force to remove it anyway)");
      }
    }
    if (Status s = tb::remove_testbed(*down_name); !s.ok()) fail("testbed", kExitFailed, s.message());
  });

  CLI::App* list = testbed->add_subcommand("list", "List the testbeds on this machine");
  list->callback([] {
    auto names = tb::list_testbeds();
    if (!names.ok()) fail("testbed", kExitFailed, names.status().message());
    for (const std::string& n : *names) std::cout << n << "\n";
  });
}

}  // namespace collide::cli
