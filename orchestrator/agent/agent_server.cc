#include "orchestrator/agent/agent_server.h"

#include <thread>

#include <fmt/format.h>

#include "collide/agent.pb.h"
#include "common/logging.h"
#include "common/netns.h"
#include "orchestrator/agent/host_interfaces.h"
#include "orchestrator/agent/host_run.h"

namespace collide::orchestrator::agent {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Until an orchestrator names its lease, one this long: enough to send the first run.
constexpr auto kDefaultLease = 10s;
// The longest an orchestrator may ask the agent to wait for a start time.
constexpr auto kMaxStartDelay = 30s;
constexpr auto kProgressEvery = 500ms;

v1::AgentReply error_reply(const std::string& message) {
  v1::AgentReply r;
  r.mutable_error()->set_message(message);
  return r;
}

}  // namespace

uint64_t monotonic_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
}

Result<std::unique_ptr<AgentServer>> AgentServer::create(AgentOptions options) {
  std::unique_ptr<AgentServer> server(new AgentServer(std::move(options)));
  auto listener = control::Listener::create(server->options_.listen_host,
                                            server->options_.listen_port, server->options_.tls);
  if (!listener.ok()) return listener.status();
  server->listener_ = std::move(listener).value();
  return server;
}

Status AgentServer::serve(const std::atomic<bool>& stop) {
  auto log = logging::get("agent");
  int sessions = 0;
  while (!stop.load() && (options_.max_sessions < 0 || sessions < options_.max_sessions)) {
    auto channel = listener_->accept(500ms);
    if (!channel.ok()) {
      if (channel.status().code() == StatusCode::kDeadlineExceeded) continue;
      // Someone without a certificate of our CA, or a connection that broke during the
      // handshake: it gets nothing, and the person running the agent should know.
      log->warn("{}", channel.status().message());
      continue;
    }
    ++sessions;
    session(**channel, stop);
  }
  return {};
}

void AgentServer::session(control::Channel& channel, const std::atomic<bool>& stop) {
  auto log = logging::get("agent");
  log->info("orchestrator {} connected", channel.peer());
  const HostRunDefaults defaults{options_.netns, options_.port_spec, options_.work_dir,
                                 options_.collide_binary, options_.eal_args, options_.engine_cores};
  std::chrono::milliseconds lease = kDefaultLease;
  auto lease_deadline = Clock::now() + lease;
  std::unique_ptr<HostRun> run;
  auto last_progress = Clock::now();

  // Ends the run on the agent's own decision; the faults are disarmed when `run` goes.
  auto abandon = [&](const std::string& why) {
    if (!run) return;
    log->warn("run {}: {}: killing the replay and disarming {} fault(s)", run->run_index(), why,
              run->armed_faults());
    run.reset();
  };

  while (true) {
    if (stop.load()) {
      abandon("the agent is stopping");
      return;
    }
    auto received = channel.receive_message<v1::AgentRequest>(100ms);
    const uint64_t received_ns = monotonic_ns();
    if (!received.ok()) {
      log->warn("orchestrator {} gone: {}", channel.peer(), received.status().message());
      abandon("the orchestrator is gone");
      return;
    }
    if (received->has_value()) {
      const v1::AgentRequest& request = **received;
      lease_deadline = Clock::now() + lease;
      Status sent;
      switch (request.body_case()) {
        case v1::AgentRequest::kClock: {
          v1::AgentReply reply;
          reply.mutable_clock()->set_orchestrator_send_ns(request.clock().orchestrator_send_ns());
          reply.mutable_clock()->set_agent_receive_ns(received_ns);
          reply.mutable_clock()->set_agent_send_ns(monotonic_ns());
          sent = channel.send(reply);
          break;
        }
        case v1::AgentRequest::kPrepare: {
          abandon("a new run replaces it");
          if (request.prepare().lease_ms() > 0) lease = std::chrono::milliseconds(request.prepare().lease_ms());
          lease_deadline = Clock::now() + lease;
          auto prepared = HostRun::prepare(request.prepare(), defaults);
          if (!prepared.ok()) {
            log->warn("run {}: {}", request.prepare().run_index(), prepared.status().message());
            sent = channel.send(error_reply(prepared.status().message()));
            break;
          }
          run = std::move(prepared).value();
          // Preparing may take a while (a DPDK port opens): it does not eat the lease.
          lease_deadline = Clock::now() + lease;
          v1::AgentReply reply;
          reply.mutable_prepared()->set_run_index(run->run_index());
          reply.mutable_prepared()->set_armed_faults(static_cast<uint32_t>(run->armed_faults()));
          log->info("run {}: ready, {} fault(s) armed, lease {} ms", run->run_index(),
                    run->armed_faults(), lease.count());
          sent = channel.send(reply);
          break;
        }
        case v1::AgentRequest::kStart: {
          if (!run || run->run_index() != request.start().run_index() || run->started()) {
            sent = channel.send(error_reply(fmt::format("no prepared run {} to start",
                                                        request.start().run_index())));
            break;
          }
          const uint64_t at = request.start().start_at_agent_ns();
          const uint64_t now = monotonic_ns();
          if (at > now) {
            const auto wait = std::chrono::nanoseconds(at - now);
            if (wait > kMaxStartDelay) {
              sent = channel.send(error_reply("start time too far ahead"));
              break;
            }
            std::this_thread::sleep_for(wait);
          }
          if (Status s = run->start(); !s.ok()) {
            sent = channel.send(error_reply(s.message()));
            abandon("it could not start");
            break;
          }
          lease_deadline = Clock::now() + lease;
          break;
        }
        case v1::AgentRequest::kDescribe: {
          // What this host offers, seen from its namespace (where its replays run).
          auto scope = options_.netns.empty()
                           ? Result<std::unique_ptr<netns::Scope>>(std::unique_ptr<netns::Scope>())
                           : netns::Scope::enter(options_.netns);
          const std::vector<std::string> requested(request.describe().interfaces().begin(),
                                                   request.describe().interfaces().end());
          auto described = scope.ok() ? describe_host(options_.interfaces, requested)
                                      : Result<v1::HostDescription>(scope.status());
          scope = Result<std::unique_ptr<netns::Scope>>(std::unique_ptr<netns::Scope>());
          if (!described.ok()) {
            sent = channel.send(error_reply(described.status().message()));
            break;
          }
          v1::AgentReply reply;
          *reply.mutable_described() = std::move(described).value();
          sent = channel.send(reply);
          break;
        }
        case v1::AgentRequest::kHeartbeat:
          break;
        case v1::AgentRequest::kStop: {
          if (run) {
            log->info("run {}: stopped by the orchestrator: {}", run->run_index(), request.stop().reason());
            v1::AgentReply reply;
            *reply.mutable_completion() = run->stop(request.stop().reason());
            run.reset();
            sent = channel.send(reply);
          }
          break;
        }
        default:
          sent = channel.send(error_reply("unknown request"));
      }
      if (!sent.ok()) {
        log->warn("orchestrator {} gone: {}", channel.peer(), sent.message());
        abandon("the orchestrator is gone");
        return;
      }
    }

    if (Clock::now() > lease_deadline) {
      log->warn("no word from orchestrator {} for the lease ({} ms)", channel.peer(), lease.count());
      abandon("the lease ran out");
      return;
    }
    if (run && run->started()) {
      if (run->finished()) {
        v1::AgentReply reply;
        *reply.mutable_completion() = run->completion();
        log->info("run {}: done in {:.3f} s, {} ops, ok={}", run->run_index(), run->elapsed_s(),
                  reply.completion().ops_size(), reply.completion().ok());
        run.reset();
        if (Status s = channel.send(reply); !s.ok()) {
          log->warn("orchestrator {} gone: {}", channel.peer(), s.message());
          return;
        }
      } else if (Clock::now() - last_progress >= kProgressEvery) {
        last_progress = Clock::now();
        v1::AgentReply reply;
        *reply.mutable_progress() = run->poll_progress();
        if (Status s = channel.send(reply); !s.ok()) {
          log->warn("orchestrator {} gone: {}", channel.peer(), s.message());
          abandon("the orchestrator is gone");
          return;
        }
      }
    }
  }
}

}  // namespace collide::orchestrator::agent
