#include "orchestrator/metrics/http_endpoint.h"

#include <fcntl.h>

#include <chrono>
#include <string_view>
#include <thread>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp uses std::exchange without it

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>

#include "common/logging.h"
#include "common/parse_number.h"
#include "orchestrator/metrics/http_connection.h"

namespace collide::orchestrator::metrics {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct ListenAddress {
  asio::ip::address ip;
  uint16_t port = 0;
  std::string host;  // as it goes in a URL: IPv6 in brackets
};

Result<ListenAddress> parse_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return invalid_argument(fmt::format("metrics address '{}': expected host:port", address));
  }
  std::string host = address.substr(0, colon);
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  ListenAddress out;
  if (bracketed) {
    out.ip = asio::ip::make_address_v6(host, ec);
  } else {
    out.ip = asio::ip::make_address_v4(host, ec);
  }
  if (ec) {
    return invalid_argument(fmt::format(
        "metrics address '{}': '{}' is not an IP address (IPv4, or IPv6 in brackets as [::1])", address, host));
  }
  auto port = parse_number<uint16_t>(std::string_view(address).substr(colon + 1),
                                     fmt::format("metrics address '{}': port", address));
  if (!port.ok()) return port.status();
  out.port = *port;
  out.host = bracketed ? "[" + host + "]" : host;
  return out;
}

// Accept failures that say the process or the system is short of descriptors or memory: they pass
// once connections close somewhere, so they are waited out.
bool out_of_resources(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
         ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
}

// collide starts other programs; the endpoint's sockets must not stay open in them (Asio does not
// open them close-on-exec).
void close_on_exec(int fd) { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

}  // namespace

// Everything below runs on the endpoint's thread once it started.
struct HttpEndpoint::Server {
  Server(const Registry& r, std::string url_host) : registry(r), host(std::move(url_host)) {}

  void accept() {
    if (open_connections >= kMaxConnections) {
      paused_at_bound = true;  // the next connection to close resumes
      return;
    }
    acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) return retry_accept_later(ec);
      close_on_exec(socket.native_handle());
      ++open_connections;
      serve_connection(std::move(socket), registry, [this] { connection_closed(); });
      accept();
    });
  }

  void retry_accept_later(const boost::system::error_code& ec) {
    if (!out_of_resources(ec)) {
      logging::get("metrics")->warn("metrics endpoint: accept failed: {}; retrying in {} ms", ec.message(),
                                    kAcceptRetryMs);
    } else if (const auto now = std::chrono::steady_clock::now(); now >= next_shortage_warning) {
      next_shortage_warning = now + std::chrono::minutes(1);
      logging::get("metrics")->warn("metrics endpoint: cannot accept ({}); retrying every {} ms", ec.message(),
                                    kAcceptRetryMs);
    }
    retry_timer.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
    retry_timer.async_wait([this](boost::system::error_code waited) {
      if (!waited) accept();
    });
  }

  void connection_closed() {
    --open_connections;
    if (paused_at_bound) {
      paused_at_bound = false;
      accept();
    }
  }

  // The io_context goes first so it is destroyed last: pending handlers (and the connections
  // they hold) die with it, after the acceptor and the timer.
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  tcp::acceptor acceptor{io};
  asio::steady_timer retry_timer{io};
  const Registry& registry;
  const std::string host;
  uint16_t port = 0;
  int open_connections = 0;
  bool paused_at_bound = false;
  // A shortage is warned of at most once a minute, not at each retry.
  std::chrono::steady_clock::time_point next_shortage_warning{};
  std::thread thread;
};

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::start(const std::string& address, const Registry& registry) {
  auto listen = parse_address(address);
  if (!listen.ok()) return listen.status();
  auto server = std::make_unique<Server>(registry, listen->host);
  const tcp::endpoint endpoint(listen->ip, listen->port);
  boost::system::error_code ec;
  server->acceptor.open(endpoint.protocol(), ec);
  if (!ec) close_on_exec(server->acceptor.native_handle());
  // A restarted run may take its port back while the last one's connections linger in TIME_WAIT;
  // a port some socket still listens on stays refused (Linux).
  if (!ec) server->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) server->acceptor.bind(endpoint, ec);
  if (!ec) server->acceptor.listen(tcp::acceptor::max_listen_connections, ec);
  if (ec) return unavailable(fmt::format("metrics endpoint: cannot listen on {}: {}", address, ec.message()));
  server->port = server->acceptor.local_endpoint(ec).port();
  if (ec) return unavailable(fmt::format("metrics endpoint: cannot listen on {}: {}", address, ec.message()));
  server->accept();
  server->thread = std::thread([s = server.get()] { s->io.run(); });
  return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(std::move(server)));
}

HttpEndpoint::HttpEndpoint(std::unique_ptr<Server> server) : server_(std::move(server)) {}

HttpEndpoint::~HttpEndpoint() {
  server_->io.stop();
  server_->thread.join();
}

uint16_t HttpEndpoint::port() const { return server_->port; }

std::string HttpEndpoint::url() const { return fmt::format("http://{}:{}/metrics", server_->host, server_->port); }

}  // namespace collide::orchestrator::metrics
