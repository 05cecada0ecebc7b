#include "orchestrator/run/agent_fleet.h"

#include <fmt/format.h>

#include "common/parse_number.h"

namespace collide::orchestrator {
namespace {

using namespace std::chrono_literals;

Result<std::pair<std::string, uint16_t>> split_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return invalid_argument(fmt::format("agent address '{}' has no port", address));
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  auto port = parse_number<uint16_t>(std::string_view(address).substr(colon + 1),
                                     fmt::format("agent address '{}': port", address));
  if (!port.ok()) return port.status();
  if (*port == 0) return invalid_argument(fmt::format("agent address '{}': bad port", address));
  return std::make_pair(host, *port);
}

Status connect_one(AgentHandle& agent, const std::filesystem::path& certs_dir) {
  auto where = split_address(agent.address);
  if (!where.ok()) return where.status();
  auto channel = control::Channel::connect(where->first, where->second,
                                           control::orchestrator_files(certs_dir), 10s);
  if (!channel.ok()) return channel.status().with_context(agent.name());
  agent.channel = std::move(channel).value();
  return {};
}

}  // namespace

std::string AgentHandle::name() const {
  return fmt::format("agent {} (host {}, {})", index, host, address);
}

std::string AgentHandle::why_gone(const Status& channel_error) {
  if (process) {
    // The connection broke: give the process a moment to finish dying and say how it ended.
    auto code = process->wait(2s);
    if (code.ok()) {
      const std::string how = *code > 128 ? fmt::format("killed by signal {}", *code - 128)
                                          : fmt::format("exited with code {}", *code);
      process.reset();
      return fmt::format("its process {} ({})", how, channel_error.message());
    }
  }
  return channel_error.message();
}

uint64_t orchestrator_now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

Result<std::vector<AgentHandle>> start_local_agents(const std::string& collide_binary,
                                                    const std::vector<LocalAgentSpec>& hosts,
                                                    const std::filesystem::path& certs_dir,
                                                    const std::filesystem::path& work_dir) {
  std::vector<AgentHandle> agents;
  for (const LocalAgentSpec& h : hosts) {
    AgentHandle agent;
    agent.index = static_cast<uint32_t>(agents.size());
    agent.host = h.host;
    // A session of its own: Ctrl-C in the terminal reaches `collide run` alone, which then stops
    // the agents in order (their replays hand back what they recorded) instead of all at once.
    auto child = process::ChildProcess::spawn(
        {"setpriv", "--pdeathsig", "KILL", "--", "setsid", collide_binary, "agent", "--listen", "127.0.0.1:0",
         "--certs", certs_dir.string(), "--netns", h.netns, "--work-dir",
         (work_dir / fmt::format("agent-{}", h.host)).string()});
    if (!child.ok()) return child.status();
    agent.process.emplace(std::move(child).value());
    auto line = agent.process->read_line(10s);
    const std::string prefix = "listening ";
    if (!line.ok() || line->rfind(prefix, 0) != 0) {
      return unavailable(fmt::format("the agent of host {} did not start: {}", h.host,
                                     line.ok() ? *line : line.status().message()));
    }
    agent.address = line->substr(prefix.size());
    agents.push_back(std::move(agent));
  }
  for (AgentHandle& a : agents) COLLIDE_RETURN_IF_ERROR(connect_one(a, certs_dir));
  return agents;
}

Result<std::vector<AgentHandle>> connect_agents(const std::vector<std::pair<uint32_t, std::string>>& list,
                                                const std::filesystem::path& certs_dir) {
  std::vector<AgentHandle> agents;
  for (const auto& [host, address] : list) {
    AgentHandle agent;
    agent.index = static_cast<uint32_t>(agents.size());
    agent.host = host;
    agent.address = address;
    COLLIDE_RETURN_IF_ERROR(connect_one(agent, certs_dir));
    agents.push_back(std::move(agent));
  }
  return agents;
}

Status measure_clocks(std::vector<AgentHandle>& agents, int samples) {
  for (AgentHandle& a : agents) {
    auto exchange = [&](uint64_t t0) -> Result<control::AgentTimes> {
      v1::AgentRequest probe;
      probe.mutable_clock()->set_orchestrator_send_ns(t0);
      COLLIDE_RETURN_IF_ERROR(a.channel->send(probe));
      // Replies of another kind (none are expected between runs) are skipped.
      const auto deadline = std::chrono::steady_clock::now() + 5s;
      while (std::chrono::steady_clock::now() < deadline) {
        auto reply = a.channel->receive_message<v1::AgentReply>(1s);
        if (!reply.ok()) return reply.status();
        if (reply->has_value() && (*reply)->has_clock() &&
            (*reply)->clock().orchestrator_send_ns() == t0) {
          return control::AgentTimes{(*reply)->clock().agent_receive_ns(), (*reply)->clock().agent_send_ns()};
        }
      }
      return deadline_exceeded("no clock reply");
    };
    auto offset = control::measure_offset(orchestrator_now_ns, exchange, samples);
    if (!offset.ok()) return offset.status().with_context(a.name());
    a.clock = *offset;
  }
  return {};
}

}  // namespace collide::orchestrator
