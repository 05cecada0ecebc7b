#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/result.h"
#include "orchestrator/metrics/registry.h"

// A Prometheus scrape target: GET /metrics answers with the registry's text exposition. It runs
// on a background thread of its own, so a long soak run can be watched while it runs; anything
// but GET / or GET /metrics gets 404 (405 for other methods). Requests are small, so a client that
// sends more than a few KiB of headers or is silent for seconds is cut off.
namespace collide::orchestrator::metrics {

class HttpEndpoint {
 public:
  // Listens on `address` ("127.0.0.1:9464", "[::1]:9464", "0.0.0.0:0" for any free port) and
  // serves `registry`, which must outlive the endpoint.
  static Result<std::unique_ptr<HttpEndpoint>> start(const std::string& address,
                                                     const Registry& registry);
  ~HttpEndpoint();  // stops serving and joins the thread
  HttpEndpoint(const HttpEndpoint&) = delete;
  HttpEndpoint& operator=(const HttpEndpoint&) = delete;

  uint16_t port() const;
  std::string url() const;  // http://host:port/metrics

  struct State;

 private:
  explicit HttpEndpoint(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace collide::orchestrator::metrics
