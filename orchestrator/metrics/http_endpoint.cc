#include "orchestrator/metrics/http_endpoint.h"

#include <arpa/inet.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <string_view>
#include <utility>
#include <vector>

#include <CivetServer.h>  // CivetCallbacks, which the Exposer takes
#include <civetweb.h>
#include <fmt/format.h>
#include <prometheus/exposer.h>

#include "common/parse_number.h"

namespace collide::orchestrator::metrics {
namespace {

// mg_check_feature's bit for IPv6 support (civetweb.h documents the bits).
constexpr unsigned kCivetwebIpv6 = 8;
// What prometheus-cpp answers GET with (the text format; Prometheus reads text/plain as that).
constexpr const char* kExpositionType = "text/plain; charset=utf-8";

struct ListenAddress {
  std::string host;       // as in a URL and in civetweb's listening_ports: IPv6 in brackets
  std::string port_text;  // checked
  bool ipv6 = false;
};

Result<ListenAddress> parse_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return invalid_argument(fmt::format("metrics address '{}': expected host:port", address));
  }
  ListenAddress out;
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    out.ipv6 = true;
  }
  unsigned char bytes[16];
  const bool is_v4 = !out.ipv6 && inet_pton(AF_INET, host.c_str(), bytes) == 1;
  const bool is_v6 = out.ipv6 && inet_pton(AF_INET6, host.c_str(), bytes) == 1;
  if (!is_v4 && !is_v6) {
    return invalid_argument(fmt::format(
        "metrics address '{}': '{}' is not an IP address (IPv4, or IPv6 in brackets as [::1])", address, host));
  }
  if (is_v6 && !HttpEndpoint::ipv6_supported()) {
    return invalid_argument(fmt::format(
        "metrics address '{}': this civetweb was built without IPv6, so the endpoint cannot listen on an "
        "IPv6 address; use an IPv4 one (127.0.0.1:PORT)",
        address));
  }
  auto port = parse_number<uint16_t>(std::string_view(address).substr(colon + 1),
                                     fmt::format("metrics address '{}': port", address));
  if (!port.ok()) return port.status();
  out.host = is_v6 ? "[" + host + "]" : host;
  out.port_text = std::to_string(*port);
  return out;
}

// civetweb says why it could not listen (e.g. "cannot bind to 127.0.0.1:9464: 98 (Address already
// in use)") through its log callback, on the thread that starts it; prometheus-cpp's exception
// only says that it failed. Kept while starting, on that thread alone.
thread_local bool t_capturing = false;
thread_local std::string t_startup_log;

int on_log_message(const mg_connection*, const char* message) {
  if (!t_capturing) return 0;  // civetweb's own handling
  if (!t_startup_log.empty()) t_startup_log += "; ";
  t_startup_log += message;
  return 1;
}

// prometheus-cpp's handler answers GET alone; civetweb sends 404 for any other method. A
// scraper's HEAD gets the headers of a GET without the body, and a method no scrape uses gets
// 405 naming those that work. Returns 0 to leave the request to the handlers.
int on_begin_request(mg_connection* conn) {
  const mg_request_info* request = mg_get_request_info(conn);
  if (request == nullptr || request->local_uri == nullptr || request->request_method == nullptr) return 0;
  if (std::string_view(request->local_uri) != "/metrics") return 0;
  const std::string_view method = request->request_method;
  if (method == "GET") return 0;
  if (method == "HEAD") {
    mg_printf(conn, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nConnection: close\r\n\r\n", kExpositionType);
    return 200;
  }
  constexpr std::string_view kBody = "only GET and HEAD\n";
  mg_printf(conn,
            "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Type: text/plain\r\n"
            "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
            kBody.size(), kBody.data());
  return 405;
}

const CivetCallbacks& callbacks() {
  static const CivetCallbacks c = [] {
    CivetCallbacks made;  // its constructor zeroes every callback
    made.log_message = on_log_message;
    made.begin_request = on_begin_request;
    return made;
  }();
  return c;
}

}  // namespace

Result<std::unique_ptr<HttpEndpoint>> HttpEndpoint::start(const std::string& address, const Registry& registry) {
  auto listen = parse_address(address);
  if (!listen.ok()) return listen.status();
  std::vector<std::string> options = {"listening_ports", listen->host + ":" + listen->port_text,
                                      "num_threads",     std::to_string(kWorkers),
                                      "request_timeout_ms", std::to_string(kRequestTimeoutMs)};
  t_startup_log.clear();
  t_capturing = true;
  std::unique_ptr<prometheus::Exposer> exposer;
  std::string failure;
  try {
    exposer = std::make_unique<prometheus::Exposer>(options, &callbacks());
  } catch (const std::exception& e) {
    failure = t_startup_log.empty() ? e.what() : t_startup_log;
  }
  t_capturing = false;
  if (!exposer) return unavailable(fmt::format("metrics endpoint: cannot listen on {}: {}", address, failure));
  exposer->RegisterCollectable(registry.prometheus());
  return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(std::move(exposer), listen->host));
}

bool HttpEndpoint::ipv6_supported() { return mg_check_feature(kCivetwebIpv6) != 0; }

HttpEndpoint::HttpEndpoint(std::unique_ptr<prometheus::Exposer> exposer, std::string host)
    : exposer_(std::move(exposer)), host_(std::move(host)) {}

HttpEndpoint::~HttpEndpoint() = default;

uint16_t HttpEndpoint::port() const {
  // civetweb reads the port back from the socket, so port 0 reports the one the kernel chose.
  const std::vector<int> ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : static_cast<uint16_t>(ports.front());
}

std::string HttpEndpoint::url() const { return fmt::format("http://{}:{}/metrics", host_, port()); }

}  // namespace collide::orchestrator::metrics
