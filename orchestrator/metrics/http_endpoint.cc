#include "orchestrator/metrics/http_endpoint.h"

#include <cerrno>
#include <chrono>
#include <deque>
#include <istream>
#include <thread>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "common/parse_number.h"

namespace collide::orchestrator::metrics {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

constexpr size_t kMaxRequestBytes = 8192;
// Connections served at once: scrapers are few, and each connection holds a descriptor. Past the
// cap the oldest connection (silent, or slow to read its answer) is closed for the new one, so a
// flood of idle connections can neither exhaust descriptors nor shut scrapers out.
constexpr size_t kMaxConnections = 32;
// Out of descriptors (EMFILE, ENFILE), accept fails at once for as long as it lasts: wait before
// trying again, longer each time, instead of spinning on it.
constexpr auto kAcceptBackoffFirst = std::chrono::milliseconds(20);
constexpr auto kAcceptBackoffMax = std::chrono::milliseconds(1000);
constexpr auto kClientTimeout = std::chrono::seconds(5);
// The content type Prometheus asks for with its text format.
constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";

// One request, one response, then the connection closes: scrapers reconnect anyway.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const Registry& registry)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), request_(kMaxRequestBytes),
        registry_(registry) {}

  // Ends the connection; its pending read or write and its timer finish with operation_aborted.
  void close() {
    if (!socket_.is_open()) return;
    error_code ignored;
    timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  void start() {
    auto self = shared_from_this();
    timer_.expires_after(kClientTimeout);
    timer_.async_wait([self](const error_code& ec) {
      if (!ec) self->close();  // a silent client holds nothing for long
    });
    asio::async_read_until(socket_, request_, "\r\n\r\n",
                           [self](const error_code& ec, size_t) { self->on_request(ec); });
  }

 private:
  void on_request(const error_code& ec) {
    if (ec == asio::error::not_found) return respond("431 Request Header Fields Too Large", "text/plain", "too large\n");
    if (ec) return close();
    std::istream in(&request_);
    std::string method, target, version;
    in >> method >> target >> version;
    target = target.substr(0, target.find('?'));
    if (method != "GET") return respond("405 Method Not Allowed", "text/plain", "only GET\n");
    if (target == "/metrics") return respond("200 OK", kExpositionType, registry_.render());
    if (target == "/") {
      return respond("200 OK", "text/html; charset=utf-8",
                     "<html><body><a href=\"/metrics\">collide metrics</a></body></html>\n");
    }
    respond("404 Not Found", "text/plain", "not found; try /metrics\n");
  }

  void respond(const std::string& status, const std::string& type, const std::string& body) {
    response_ = fmt::format("HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n"
                            "Connection: close\r\n\r\n{}",
                            status, type, body.size(), body);
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(response_),
                      [self](const error_code&, size_t) { self->close(); });
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  asio::streambuf request_;
  std::string response_;
  const Registry& registry_;
};

Result<tcp::endpoint> parse_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return invalid_argument(fmt::format("metrics address '{}': expected host:port", address));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  error_code ec;
  const auto ip = asio::ip::make_address(host, ec);
  if (ec) return invalid_argument(fmt::format("metrics address '{}': '{}' is not an IP address", address, host));
  auto port = parse_number<uint16_t>(std::string_view(address).substr(colon + 1),
                                     fmt::format("metrics address '{}': port", address));
  if (!port.ok()) return port.status();
  return tcp::endpoint(ip, *port);
}

}  // namespace

struct HttpEndpoint::State {
  explicit State(const Registry& r) : registry(r), acceptor(io), backoff_timer(io) {}
  const Registry& registry;
  asio::io_context io;
  tcp::acceptor acceptor;
  asio::steady_timer backoff_timer;
  std::chrono::milliseconds backoff{0};
  std::deque<std::weak_ptr<Connection>> connections;  // oldest first; all on the io thread
  std::thread thread;

  // Closes the oldest connection still open; false when there is none.
  bool close_oldest() {
    while (!connections.empty()) {
      auto oldest = connections.front().lock();
      connections.pop_front();
      if (oldest) {
        oldest->close();
        return true;
      }
    }
    return false;
  }

  void serve(tcp::socket socket) {
    std::erase_if(connections, [](const std::weak_ptr<Connection>& c) { return c.expired(); });
    if (connections.size() >= kMaxConnections) close_oldest();
    auto connection = std::make_shared<Connection>(std::move(socket), registry);
    connections.push_back(connection);
    connection->start();
  }

  void accept() {
    acceptor.async_accept([this](const error_code& ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (!ec) {
        backoff = std::chrono::milliseconds(0);
        serve(std::move(socket));
        return accept();
      }
      // Out of descriptors (or another failure that would repeat at once): free one if a
      // connection holds it, and try again after a pause that grows while the failure lasts.
      if (ec == asio::error::no_descriptors || ec.value() == ENFILE) close_oldest();
      backoff = std::min(kAcceptBackoffMax, std::max(kAcceptBackoffFirst, backoff * 2));
      backoff_timer.expires_after(backoff);
      backoff_timer.async_wait([this](const error_code& wait_ec) {
        if (!wait_ec) accept();
      });
    });
  }
};

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::start(const std::string& address,
                                                          const Registry& registry) {
  auto endpoint = parse_address(address);
  if (!endpoint.ok()) return endpoint.status();
  auto state = std::make_unique<State>(registry);
  error_code ec;
  state->acceptor.open(endpoint->protocol(), ec);
  if (!ec) state->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) state->acceptor.bind(*endpoint, ec);
  if (!ec) state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return unavailable(fmt::format("metrics endpoint: cannot listen on {}: {}", address, ec.message()));
  state->accept();
  State* s = state.get();
  state->thread = std::thread([s] { s->io.run(); });
  return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(std::move(state)));
}

HttpEndpoint::HttpEndpoint(std::unique_ptr<State> state) : state_(std::move(state)) {}

HttpEndpoint::~HttpEndpoint() {
  state_->io.stop();
  if (state_->thread.joinable()) state_->thread.join();
}

uint16_t HttpEndpoint::port() const {
  error_code ec;
  return state_->acceptor.local_endpoint(ec).port();
}

std::string HttpEndpoint::url() const {
  error_code ec;
  const auto ep = state_->acceptor.local_endpoint(ec);
  const std::string host = ep.address().is_v6() ? "[" + ep.address().to_string() + "]" : ep.address().to_string();
  return fmt::format("http://{}:{}/metrics", host, ep.port());
}

}  // namespace collide::orchestrator::metrics
