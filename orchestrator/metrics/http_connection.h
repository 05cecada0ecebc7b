#pragma once

#include <functional>

#include <boost/asio/ip/tcp.hpp>

#include "orchestrator/metrics/registry.h"

namespace collide::orchestrator::metrics {

// Serves one HTTP request on `socket` (accepted by the metrics endpoint) and closes it: reads the
// request within HttpEndpoint::kRequestTimeoutMs, answers it from `registry`, then closes.
// `closed` runs on the socket's executor once the socket is closed, whatever the outcome; it does
// not run if the executor is stopped and destroyed first.
void serve_connection(boost::asio::ip::tcp::socket socket, const Registry& registry,
                      std::function<void()> closed);

}  // namespace collide::orchestrator::metrics
