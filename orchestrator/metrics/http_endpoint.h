#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "orchestrator/metrics/registry.h"

// A Prometheus scrape target: a small HTTP server (Boost.Asio and Beast, one thread of its own)
// serves the registry's text exposition at /metrics while a long soak run goes on. GET and HEAD
// are answered as a scraper expects; other methods on /metrics get 405, other paths 404. Each
// connection carries one request and is closed after the answer.
namespace collide::orchestrator::metrics {

class HttpEndpoint {
 public:
  // Connections held at once. Beyond it the endpoint stops accepting until one closes, and the
  // others wait in the kernel's listen queue: clients cannot make it hold unbounded descriptors.
  static constexpr int kMaxConnections = 32;
  // A client that has not sent a whole request this long after it was accepted is closed. Silent
  // clients below kMaxConnections do not delay a scrape at all (connections are served
  // side by side); beyond it a scrape waits for places to free, about the timeout for each
  // kMaxConnections silent clients queued before it.
  static constexpr int kRequestTimeoutMs = 1000;
  // After accept fails (out of descriptors or memory, or anything else), the endpoint waits this
  // long before accepting again instead of retrying at once: a pending connection keeps the
  // listening socket readable, so retrying at once would spin.
  static constexpr int kAcceptRetryMs = 100;
  // The most a request's line and headers may take; a longer request is closed unanswered.
  static constexpr size_t kMaxRequestHeaderBytes = 8 * 1024;

  // Listens on `address`: an IPv4 address and port ("127.0.0.1:9464", "0.0.0.0:0" for any free
  // port), or an IPv6 one in brackets ("[::1]:9464"). Serves `registry`, which must outlive the
  // endpoint.
  static Result<std::unique_ptr<HttpEndpoint>> start(const std::string& address, const Registry& registry);
  ~HttpEndpoint();  // stops serving: closes every connection and joins the thread
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  uint16_t port() const;    // the port bound, also when asked for port 0
  std::string url() const;  // http://host:port/metrics

 private:
  struct Server;
  explicit HttpEndpoint(std::unique_ptr<Server> server);
  std::unique_ptr<Server> server_;
};

}  // namespace collide::orchestrator::metrics
