// `collide agent`: one per host; runs what the orchestrator sends over an authenticated channel.
#include <csignal>
#include <filesystem>
#include <iostream>
#include <memory>

#include <boost/asio/ip/address.hpp>
#include <fmt/format.h>

#include "common/parse_number.h"
#include "injectors/guardian.h"
#include "orchestrator/agent/agent_server.h"
#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/start_sweep.h"

namespace collide::cli {
namespace {

struct AgentCliOptions {
  std::string listen = "127.0.0.1:7411";
  bool listen_any = false;
  std::string certs;
  std::string netns;
  std::string port_spec;
  std::string work_dir;
  int sessions = -1;
  std::vector<std::string> interfaces;
  std::vector<std::string> eal_args;
  std::vector<int> engine_cores;
};

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "collide" : p.string();
}

void run(const AgentCliOptions& opt) {
  const auto colon = opt.listen.rfind(':');
  if (colon == std::string::npos) fail("agent", kExitUsage, "--listen wants ADDRESS:PORT");
  orchestrator::agent::AgentOptions o;
  o.listen_host = opt.listen.substr(0, colon);
  if (o.listen_host.size() > 2 && o.listen_host.front() == '[') o.listen_host = o.listen_host.substr(1, o.listen_host.size() - 2);
  auto port = parse_number<uint16_t>(std::string_view(opt.listen).substr(colon + 1),
                                     "--listen " + opt.listen + ": port");
  if (!port.ok()) fail("agent", kExitUsage, port.status().message());
  o.listen_port = *port;
  // Every address of the host means every network it is on, the management one and the internet
  // included: that must be what the person running the agent wants, not what a typo gave.
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(o.listen_host, ec);
  if (!ec && address.is_unspecified() && !opt.listen_any) {
    fail("agent", kExitUsage,
         fmt::format("--listen {}: {} is every address of this host, which offers the agent to "
                     "every network the host is on; give the address of the control network, or "
                     "pass --listen-any if that is what you want",
                     opt.listen, o.listen_host));
  }
  o.tls = orchestrator::control::agent_files(opt.certs);
  o.netns = opt.netns;
  o.port_spec = opt.port_spec;
  o.work_dir = opt.work_dir.empty()
                   ? std::filesystem::temp_directory_path() / fmt::format("collide-agent-{}", getpid())
                   : std::filesystem::path(opt.work_dir);
  o.collide_binary = self_path();
  o.max_sessions = opt.sessions;
  o.interfaces = opt.interfaces;
  o.eal_args = opt.eal_args;
  o.engine_cores = opt.engine_cores;
  sweep_at_start("agent", injectors::default_state_dir());
  auto server = orchestrator::agent::AgentServer::create(o);
  if (!server.ok()) fail("agent", kExitFailed, server.status().message());
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  // Whoever started us reads the port from here (with --listen ...:0 it is chosen now).
  const bool v6 = o.listen_host.find(':') != std::string::npos;
  std::cout << "listening "
            << (v6 ? fmt::format("[{}]:{}", o.listen_host, (*server)->port())
                   : fmt::format("{}:{}", o.listen_host, (*server)->port()))
            << std::endl;
  if (Status s = (*server)->serve(g_stop); !s.ok()) fail("agent", kExitFailed, s.message());
}

}  // namespace

void add_agent_command(CLI::App& app) {
  auto opt = std::make_shared<AgentCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "agent", "Serve the orchestrator on one host: arm faults, replay, report (mutual TLS)");
  cmd->add_option("--listen", opt->listen, "ADDRESS:PORT to listen on (port 0: any free one)")
      ->capture_default_str();
  cmd->add_flag("--listen-any", opt->listen_any,
                "allow --listen on 0.0.0.0 or [::] (every address of the host)");
  cmd->add_option("--certs", opt->certs, "directory with ca.pem, agent.pem, agent.key "
                                         "(`collide certs generate`)")
      ->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--netns", opt->netns, "the host's network namespace, where replays run");
  cmd->add_option("--port-spec", opt->port_spec,
                  "packet port for replays when the orchestrator names none (e.g. dpdk:...)");
  cmd->add_option("--work-dir", opt->work_dir, "where traces and results of replays go");
  cmd->add_option("--sessions", opt->sessions, "serve this many orchestrators, then exit");
  cmd->add_option("--interfaces", opt->interfaces,
                  "real hosts: the only interfaces runs may use (e.g. eth1,eth2)")
      ->delimiter(',');
  cmd->add_option("--eal-arg", opt->eal_args,
                  "a DPDK EAL argument for this host's replays, after the built-in ones "
                  "(e.g. --eal-arg=--log-level=pmd.net.mlx5:8); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--engine-cores", opt->engine_cores,
                  "the CPUs this host's NIC engines are pinned to, one per NIC in rail order "
                  "(e.g. cores near each NIC's NUMA node: 2,3,4,5); default: not pinned")
      ->delimiter(',')->check(CLI::NonNegativeNumber);
  cmd->callback([opt] { run(*opt); });
}

}  // namespace collide::cli
