#include "orchestrator/control/tls_channel.h"

#include <arpa/inet.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace collide::orchestrator::control {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

Result<std::shared_ptr<ssl::context>> make_context(bool server, const TlsFiles& files) {
  auto ctx = std::make_shared<ssl::context>(server ? ssl::context::tls_server : ssl::context::tls_client);
  // TLS 1.3 only: no renegotiation, no legacy ciphers, forward secrecy always.
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_3_VERSION);
  boost::system::error_code ec;
  ctx->load_verify_file(files.ca.string(), ec);
  if (ec) return invalid_argument(fmt::format("CA certificate {}: {}", files.ca.string(), ec.message()));
  // A side without a certificate of its own can still try to connect; the agent refuses it.
  if (!files.certificate.empty()) {
    ctx->use_certificate_chain_file(files.certificate.string(), ec);
    if (ec) {
      return invalid_argument(fmt::format("certificate {}: {}", files.certificate.string(), ec.message()));
    }
    ctx->use_private_key_file(files.key.string(), ssl::context::pem, ec);
    if (ec) return invalid_argument(fmt::format("key {}: {}", files.key.string(), ec.message()));
  }
  ctx->set_verify_mode(server ? ssl::verify_peer | ssl::verify_fail_if_no_peer_cert : ssl::verify_peer, ec);
  if (ec) return internal_error(fmt::format("TLS verify mode: {}", ec.message()));
  return ctx;
}

std::string describe(const tcp::endpoint& e) {
  return e.address().is_v6() ? fmt::format("[{}]:{}", e.address().to_string(), e.port())
                             : fmt::format("{}:{}", e.address().to_string(), e.port());
}

std::string describe_error(const boost::system::error_code& ec) {
  if (ec == asio::error::eof || ec == ssl::error::stream_truncated) return "the peer closed the connection";
  return ec.message();
}

// Runs `io` until `done()` or the deadline; false on timeout.
template <typename Done>
bool run_io_until(asio::io_context& io, Done done, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    const auto now = Clock::now();
    if (now >= deadline) {
      io.restart();
      io.poll();
      return done();
    }
    if (io.stopped()) io.restart();
    io.run_one_for(deadline - now);
  }
  return true;
}

}  // namespace

Channel::Channel(std::unique_ptr<asio::io_context> io, std::shared_ptr<ssl::context> tls,
                 tcp::socket socket)
    : io_(std::move(io)), tls_(std::move(tls)) {
  boost::system::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  peer_ = ec ? "unknown peer" : describe(remote);
  socket.set_option(tcp::no_delay(true), ec);  // small requests and replies: no Nagle delay
  stream_ = std::make_unique<Stream>(std::move(socket), *tls_);
}

Channel::~Channel() {
  shut();
  // Let the aborted read finish while the object still exists.
  io_->restart();
  io_->poll();
}

template <typename Done>
bool Channel::run_until(Done done, Millis timeout) {
  return run_io_until(*io_, done, timeout);
}

void Channel::shut() {
  boost::system::error_code ec;
  stream_->lowest_layer().close(ec);
}

Status Channel::handshake(ssl::stream_base::handshake_type type, Millis timeout) {
  bool done = false;
  boost::system::error_code ec;
  stream_->async_handshake(type, [&](const boost::system::error_code& e) {
    ec = e;
    done = true;
  });
  if (!run_until([&] { return done; }, timeout)) {
    shut();
    run_until([&] { return done; }, Millis(1000));
    return deadline_exceeded(fmt::format("TLS handshake with {} took too long", peer_));
  }
  if (ec) return permission_denied(fmt::format("TLS handshake with {} failed: {}", peer_, ec.message()));
  return {};
}

Result<std::unique_ptr<Channel>> Channel::connect(const std::string& host, uint16_t port,
                                                  const TlsFiles& files, Millis timeout) {
  auto tls = make_context(/*server=*/false, files);
  if (!tls.ok()) return tls.status();
  auto io = std::make_unique<asio::io_context>();
  tcp::resolver resolver(*io);
  boost::system::error_code ec;
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return not_found(fmt::format("agent address {}: {}", host, ec.message()));
  tcp::socket socket(*io);
  bool done = false;
  asio::async_connect(socket, endpoints, [&](const boost::system::error_code& e, const tcp::endpoint&) {
    ec = e;
    done = true;
  });
  if (!run_io_until(*io, [&] { return done; }, timeout)) {
    socket.close(ec);
    run_io_until(*io, [&] { return done; }, Millis(1000));
    return deadline_exceeded(fmt::format("connecting to agent {}:{} took too long", host, port));
  }
  if (ec) return unavailable(fmt::format("connecting to agent {}:{}: {}", host, port, ec.message()));

  std::unique_ptr<Channel> channel(new Channel(std::move(io), *tls, std::move(socket)));
  // The agent's certificate must name the address we dialled, not just chain to the CA.
  SSL* ssl_handle = channel->stream_->native_handle();
  in6_addr any{};
  const bool is_ip = inet_pton(AF_INET, host.c_str(), &any) == 1 || inet_pton(AF_INET6, host.c_str(), &any) == 1;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
    SSL_set_tlsext_host_name(ssl_handle, host.c_str());
  }
  COLLIDE_RETURN_IF_ERROR(channel->handshake(ssl::stream_base::client, timeout));
  return channel;
}

Status Channel::send(const google::protobuf::MessageLite& message, Millis timeout) {
  std::string payload;
  if (!message.SerializeToString(&payload)) return internal_error("serialising a control message");
  auto frame = encode_frame(payload);
  if (!frame.ok()) return frame.status();
  write_buffer_ = std::move(frame).value();
  bool done = false;
  boost::system::error_code ec;
  asio::async_write(*stream_, asio::buffer(write_buffer_),
                    [&](const boost::system::error_code& e, size_t) {
                      ec = e;
                      done = true;
                    });
  if (!run_until([&] { return done; }, timeout)) {
    // A write that cannot finish leaves the stream in an unknown state: the channel is done for.
    shut();
    run_until([&] { return done; }, Millis(1000));
    return deadline_exceeded(fmt::format("sending to {} took too long", peer_));
  }
  if (ec) return unavailable(fmt::format("connection to {} lost: {}", peer_, describe_error(ec)));
  return {};
}

void Channel::start_read() {
  if (reading_ || !read_error_.ok()) return;
  reading_ = true;
  stream_->async_read_some(asio::buffer(read_buffer_),
                           [this](const boost::system::error_code& ec, size_t n) {
                             reading_ = false;
                             if (ec) {
                               read_error_ = unavailable(fmt::format(
                                   "connection to {} lost: {}", peer_, describe_error(ec)));
                               return;
                             }
                             if (Status s = decoder_.feed({read_buffer_.data(), n}); !s.ok()) {
                               read_error_ = s.with_context(peer_);
                               return;
                             }
                             start_read();
                           });
}

Result<std::optional<std::string>> Channel::receive(Millis timeout) {
  if (!decoder_.has_frame()) {
    start_read();
    run_until([&] { return decoder_.has_frame() || !read_error_.ok(); }, timeout);
  }
  if (decoder_.has_frame()) return std::optional<std::string>(decoder_.next());
  if (!read_error_.ok()) return read_error_;
  return std::optional<std::string>();
}

Result<std::unique_ptr<Listener>> Listener::create(const std::string& host, uint16_t port,
                                                   const TlsFiles& files) {
  std::unique_ptr<Listener> listener(new Listener());
  auto tls = make_context(/*server=*/true, files);
  if (!tls.ok()) return tls.status();
  listener->tls_ = *tls;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) return invalid_argument(fmt::format("listen address '{}': {}", host, ec.message()));
  auto acceptor = std::make_unique<tcp::acceptor>(listener->io_);
  const tcp::endpoint endpoint(address, port);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return unavailable(fmt::format("listening on {}: {}", describe(endpoint), ec.message()));
  listener->acceptor_ = std::move(acceptor);
  return listener;
}

uint16_t Listener::port() const {
  boost::system::error_code ec;
  return acceptor_->local_endpoint(ec).port();
}

Result<std::unique_ptr<Channel>> Listener::accept(Millis timeout) {
  auto io = std::make_unique<asio::io_context>();
  tcp::socket socket(*io);
  bool done = false;
  boost::system::error_code ec;
  acceptor_->async_accept(socket, [&](const boost::system::error_code& e) {
    ec = e;
    done = true;
  });
  if (!run_io_until(io_, [&] { return done; }, timeout)) {
    acceptor_->cancel(ec);
    run_io_until(io_, [&] { return done; }, Millis(1000));
    return deadline_exceeded("no orchestrator connected");
  }
  if (ec) return unavailable(fmt::format("accepting a connection: {}", ec.message()));
  std::unique_ptr<Channel> channel(new Channel(std::move(io), tls_, std::move(socket)));
  // A peer that cannot show a certificate of our CA gets no further than this.
  Status s = channel->handshake(asio::ssl::stream_base::server, Millis(10000));
  if (!s.ok()) return permission_denied(fmt::format("refused {}: {}", channel->peer(), s.message()));
  return channel;
}

}  // namespace collide::orchestrator::control
