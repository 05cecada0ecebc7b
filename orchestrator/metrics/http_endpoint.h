#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "orchestrator/metrics/registry.h"

namespace prometheus {
class Exposer;
}

// A Prometheus scrape target: prometheus-cpp's Exposer (civetweb, threads of its own) serves the
// registry's text exposition at /metrics while a long soak run goes on. GET and HEAD are answered
// as a scraper expects; other methods on /metrics get 405, other paths 404.
namespace collide::orchestrator::metrics {

class HttpEndpoint {
 public:
  // civetweb serves a connection per worker thread, in the order they came. A client that has not
  // sent its request within the timeout loses its worker, so clients that connect and stay
  // silent delay a scrape queued behind them (by about the timeout for each kWorkers of them)
  // but cannot hold the endpoint.
  static constexpr int kWorkers = 8;
  static constexpr int kRequestTimeoutMs = 1000;

  // Listens on `address`: an IPv4 address and port ("127.0.0.1:9464", "0.0.0.0:0" for any free
  // port), or an IPv6 one in brackets ("[::1]:9464") where civetweb was built with IPv6 (Debian
  // 12's is not: such an address is refused saying so). Serves `registry`, which must outlive
  // the endpoint.
  static Result<std::unique_ptr<HttpEndpoint>> start(const std::string& address, const Registry& registry);
  ~HttpEndpoint();  // stops serving
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  // Whether the civetweb linked in can listen on IPv6 addresses.
  static bool ipv6_supported();

  uint16_t port() const;    // the port bound, also when asked for port 0
  std::string url() const;  // http://host:port/metrics

 private:
  HttpEndpoint(std::unique_ptr<prometheus::Exposer> exposer, std::string host);
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string host_;  // as it goes in a URL: IPv6 in brackets
};

}  // namespace collide::orchestrator::metrics
