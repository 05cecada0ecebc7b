#include "orchestrator/metrics/http_connection.h"

#include <chrono>
#include <memory>
#include <string_view>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp uses std::exchange without it

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <prometheus/text_serializer.h>

#include "orchestrator/metrics/http_endpoint.h"

namespace collide::orchestrator::metrics {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// The text format; Prometheus reads text/plain as its version 0.0.4.
constexpr const char* kExpositionType = "text/plain; charset=utf-8";
// A scrape sends no body; what a client may send with another method before it gets its 405.
constexpr std::uint64_t kMaxRequestBodyBytes = 1024;
// Writing the answer to a client that does not read it gives up after this long.
constexpr std::chrono::seconds kResponseTimeout{5};

Response answer(const Request& request, const Registry& registry) {
  Response response;
  response.version(11);
  response.keep_alive(false);
  const std::string_view target(request.target().data(), request.target().size());
  if (target.substr(0, target.find('?')) != "/metrics") {
    response.result(http::status::not_found);
    response.set(http::field::content_type, "text/plain");
    response.body() = "not found; metrics are at /metrics\n";
  } else if (request.method() == http::verb::get) {
    response.result(http::status::ok);
    response.set(http::field::content_type, kExpositionType);
    response.body() = prometheus::TextSerializer().Serialize(registry.prometheus()->Collect());
  } else if (request.method() == http::verb::head) {
    // The headers of a GET without its body, nor its length (which would mean a scrape).
    response.result(http::status::ok);
    response.set(http::field::content_type, kExpositionType);
    return response;
  } else {
    response.result(http::status::method_not_allowed);
    response.set(http::field::allow, "GET, HEAD");
    response.set(http::field::content_type, "text/plain");
    response.body() = "only GET and HEAD\n";
  }
  response.prepare_payload();
  return response;
}

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(boost::asio::ip::tcp::socket socket, const Registry& registry, std::function<void()> closed)
      : stream_(std::move(socket)), registry_(registry), closed_(std::move(closed)) {}

  void start() {
    parser_.header_limit(HttpEndpoint::kMaxRequestHeaderBytes);
    parser_.body_limit(kMaxRequestBodyBytes);
    stream_.expires_after(std::chrono::milliseconds(HttpEndpoint::kRequestTimeoutMs));
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) return close();  // timed out, hung up, or too large / not HTTP: nothing to answer
    response_ = answer(parser_.get(), registry_);
    stream_.expires_after(kResponseTimeout);
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, size_t) { self->close(); });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
    closed_();
  }

  beast::tcp_stream stream_;
  const Registry& registry_;
  std::function<void()> closed_;
  // Bounded by the header and body limits, so a client cannot make the endpoint allocate more.
  beast::flat_buffer buffer_{HttpEndpoint::kMaxRequestHeaderBytes + kMaxRequestBodyBytes};
  http::request_parser<http::string_body> parser_;
  Response response_;
};

}  // namespace

void serve_connection(boost::asio::ip::tcp::socket socket, const Registry& registry, std::function<void()> closed) {
  std::make_shared<Connection>(std::move(socket), registry, std::move(closed))->start();
}

}  // namespace collide::orchestrator::metrics
