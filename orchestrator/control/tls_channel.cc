#include "orchestrator/control/tls_channel.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace collide::orchestrator::control {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using boost::asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// The files exist and our private key is ours alone, or an error that says which file and what
// to do: OpenSSL's own words ("asio.ssl error") name neither.
Status check_files(const TlsFiles& files) {
  std::vector<std::string> missing;
  std::vector<std::filesystem::path> wanted = {files.ca};
  if (!files.certificate.empty()) wanted.insert(wanted.end(), {files.certificate, files.key});
  for (const auto& path : wanted) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) missing.push_back(path.string());
  }
  if (!missing.empty()) {
    return not_found(fmt::format("{} {} missing (`collide certs generate --dir {}` makes a CA "
                                 "and certificates for both sides)",
                                 fmt::join(missing, ", "), missing.size() == 1 ? "is" : "are",
                                 files.ca.parent_path().string()));
  }
  if (files.certificate.empty()) return {};
  struct stat st {};
  if (stat(files.key.c_str(), &st) != 0) return errno_status(errno, files.key.string());
  // Whoever reads the key can pose as us; whoever writes it can swap it.
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return permission_denied(fmt::format(
        "key {} is {} by group or others (mode {:04o}): `chmod 600 {}` and keep it that way",
        files.key.string(),
        (st.st_mode & (S_IRGRP | S_IROTH)) != 0 ? "readable" : "open", st.st_mode & 07777,
        files.key.string()));
  }
  return {};
}

// Why the handshake failed, in words: when the peer's certificate was checked and refused, the
// check's result says why (OpenSSL's error queue says "EVP lib" for a certificate of another CA
// that has the same name as ours).
std::string handshake_failure(SSL* ssl, const boost::system::error_code& ec) {
  const long verify = SSL_get_verify_result(ssl);
  switch (verify) {
    case X509_V_OK:
      return ec.message();
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_UNTRUSTED:
      return fmt::format("its certificate is not signed by our CA ({})",
                         X509_verify_cert_error_string(verify));
    default:
      return fmt::format("its certificate was refused: {}", X509_verify_cert_error_string(verify));
  }
}

Result<std::shared_ptr<ssl::context>> make_context(bool server, const TlsFiles& files) {
  COLLIDE_RETURN_IF_ERROR(check_files(files));
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
  if (ec) {
    return permission_denied(fmt::format("TLS handshake with {} failed: {}", peer_,
                                         handshake_failure(stream_->native_handle(), ec)));
  }
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
                                                   const TlsFiles& files, PreAuthLimits limits) {
  std::unique_ptr<Listener> listener(new Listener(limits));
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
  listener->retry_timer_ = std::make_unique<asio::steady_timer>(listener->io_);
  listener->accept_next();
  listener->accept_thread_ = std::thread([l = listener.get()] { l->io_.run(); });
  return listener;
}

Listener::~Listener() {
  io_.stop();
  if (accept_thread_.joinable()) accept_thread_.join();
  boost::system::error_code ec;
  if (acceptor_) acceptor_->close(ec);
  std::unique_lock lock(mutex_);
  closing_ = true;
  // Handshakes in progress end now; each thread reports back before it lets go of `this`.
  for (Channel* c : pending_) asio::post(*c->io_, [c] { c->shut(); });
  changed_.wait(lock, [this] { return pending_.empty(); });
}

uint16_t Listener::port() const {
  boost::system::error_code ec;
  return acceptor_->local_endpoint(ec).port();
}

void Listener::accept_next() {
  // Each connection gets its own io_context: its channel is later driven by the session's thread.
  next_io_ = std::make_unique<asio::io_context>();
  next_socket_ = std::make_unique<tcp::socket>(*next_io_);
  acceptor_->async_accept(*next_socket_, [this](const boost::system::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, say: tell the caller, and try again shortly rather than spin.
      report(unavailable(fmt::format("accepting a connection: {}", ec.message())));
      retry_timer_->expires_after(Millis(100));
      retry_timer_->async_wait([this](const boost::system::error_code& e) {
        if (!e) accept_next();
      });
      return;
    }
    admit(std::move(*next_socket_), std::move(next_io_));
    accept_next();
  });
}

void Listener::admit(tcp::socket socket, std::unique_ptr<asio::io_context> io) {
  boost::system::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  auto ip = remote.address();
  if (ip.is_v6() && ip.to_v6().is_v4_mapped()) ip = asio::ip::make_address_v4(asio::ip::v4_mapped, ip.to_v6());
  const std::string address = ip.to_string();
  const std::string peer = describe(remote);
  std::unique_ptr<Channel> channel;
  {
    std::lock_guard lock(mutex_);
    int& from_address = pending_by_address_[address];
    std::string over;
    if (from_address >= limits_.per_address) {
      over = fmt::format("{} unauthenticated connection(s) from {} already", from_address, address);
    } else if (static_cast<int>(pending_.size()) >= limits_.total) {
      over = fmt::format("{} unauthenticated connection(s) already", pending_.size());
    }
    if (!over.empty()) {
      if (from_address == 0) pending_by_address_.erase(address);
      socket.close(ec);
      report(permission_denied(fmt::format("refused {}: {}", peer, over)));
      return;
    }
    ++from_address;
    channel.reset(new Channel(std::move(io), tls_, std::move(socket)));
    pending_.insert(channel.get());
  }
  std::thread([this, c = std::move(channel), address]() mutable { handshake(std::move(c), address); })
      .detach();
}

void Listener::handshake(std::unique_ptr<Channel> channel, const std::string& address) {
  // A peer that cannot show a certificate of our CA gets no further than this.
  Status s = channel->handshake(asio::ssl::stream_base::server, limits_.handshake_timeout);
  Channel* const handle = channel.get();
  const std::string peer = channel->peer();
  std::lock_guard lock(mutex_);
  // Out of pending_ before the channel goes: a closing listener posts to every channel it finds
  // there, under this lock, and must not find one already destroyed.
  pending_.erase(handle);
  if (--pending_by_address_[address] <= 0) pending_by_address_.erase(address);
  if (closing_ || !s.ok()) channel.reset();
  if (!closing_) {
    if (s.ok()) report(std::move(channel));
    else report(permission_denied(fmt::format("refused {}: {}", peer, s.message())));
  }
  changed_.notify_all();
}

void Listener::report(Result<std::unique_ptr<Channel>> outcome) {
  // Called with mutex_ held. An agent busy with a run does not call accept(): a flood of
  // refusals must not grow without bound meanwhile.
  constexpr size_t kMaxQueuedRefusals = 64;
  if (!outcome.ok()) {
    if (queued_refusals_ >= kMaxQueuedRefusals) {
      ++unreported_refusals_;
      return;
    }
    ++queued_refusals_;
  }
  outcomes_.push_back(std::move(outcome));
  changed_.notify_all();
}

Result<std::unique_ptr<Channel>> Listener::accept(Millis timeout) {
  std::unique_lock lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [this] { return !outcomes_.empty(); })) {
    return deadline_exceeded("no orchestrator connected");
  }
  auto outcome = std::move(outcomes_.front());
  outcomes_.pop_front();
  if (outcome.ok()) return outcome;
  --queued_refusals_;
  if (unreported_refusals_ > 0 && queued_refusals_ == 0) {
    const size_t more = std::exchange(unreported_refusals_, 0);
    return permission_denied(fmt::format("{} (and {} more refused meanwhile)",
                                         outcome.status().message(), more));
  }
  return outcome;
}

}  // namespace collide::orchestrator::control
