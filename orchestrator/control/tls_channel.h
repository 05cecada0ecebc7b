#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <google/protobuf/message_lite.h>

#include "common/result.h"
#include "orchestrator/control/certs.h"
#include "orchestrator/control/framing.h"

// The control channel: framed protobuf messages over TLS 1.3 with certificates on both sides.
// The agent (server) admits only clients whose certificate chains to its CA; the orchestrator
// (client) admits only agents whose certificate does and names the address it dialled.
//
// A channel is used by one thread. It owns an io_context and keeps one read in flight between
// calls, so a receive() that times out loses nothing: the bytes land in the next call. (One SSL
// object cannot be read and written from two threads, which is why there is no reader thread.)
namespace collide::orchestrator::control {

using Millis = std::chrono::milliseconds;

class Channel {
 public:
  // Connects to an agent at host:port and completes the handshake within `timeout`.
  static Result<std::unique_ptr<Channel>> connect(const std::string& host, uint16_t port,
                                                  const TlsFiles& files, Millis timeout);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  Status send(const google::protobuf::MessageLite& message, Millis timeout = Millis(10000));
  // The next message's bytes; nullopt when none arrived within `timeout`; an error once the peer
  // has gone (closed, reset, or sent something that is not a frame).
  Result<std::optional<std::string>> receive(Millis timeout);
  // The same, parsed into `M`; an unparsable message is an error.
  template <typename M>
  Result<std::optional<M>> receive_message(Millis timeout) {
    auto bytes = receive(timeout);
    if (!bytes.ok()) return bytes.status();
    if (!bytes->has_value()) return std::optional<M>();
    M message;
    if (!message.ParseFromString(**bytes)) {
      return data_loss("a control message of " + std::to_string((*bytes)->size()) +
                       " bytes that does not parse as " + message.GetTypeName());
    }
    return std::optional<M>(std::move(message));
  }
  // "address:port" of the other side.
  const std::string& peer() const { return peer_; }

 private:
  friend class Listener;
  using Stream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;
  Channel(std::unique_ptr<boost::asio::io_context> io, std::shared_ptr<boost::asio::ssl::context> tls,
          boost::asio::ip::tcp::socket socket);
  // Runs handlers until `done()` or the deadline; false on timeout.
  template <typename Done>
  bool run_until(Done done, Millis timeout);
  Status handshake(boost::asio::ssl::stream_base::handshake_type type, Millis timeout);
  void start_read();
  void shut();

  std::unique_ptr<boost::asio::io_context> io_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  std::unique_ptr<Stream> stream_;
  std::string peer_;
  FrameDecoder decoder_;
  std::array<char, 64 * 1024> read_buffer_{};
  bool reading_ = false;
  Status read_error_;
  std::string write_buffer_;  // lives until its write completes
};

// What a listener grants peers that have not shown a certificate yet. Each costs a socket and a
// handshake in progress, so they get little time and few slots; those over a cap are closed at
// once. An orchestrator needs one connection per agent and a handshake of milliseconds.
struct PreAuthLimits {
  Millis handshake_timeout{3000};
  int per_address = 4;  // unauthenticated connections from one address
  int total = 32;       // from everyone
};

// An agent's listening socket. A thread of its own accepts connections and starts each one's
// handshake on a thread of its own, so a peer that connects and says nothing delays nobody else;
// accept() hands over the peers that completed theirs, one at a time.
class Listener {
 public:
  // Binds host:port (port 0: any free port, see port()).
  static Result<std::unique_ptr<Listener>> create(const std::string& host, uint16_t port,
                                                  const TlsFiles& files, PreAuthLimits limits = {});
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  uint16_t port() const;
  // The next peer that completed a TLS handshake with a valid client certificate. A peer that
  // failed it, took too long or came over a cap is an error of kind kPermissionDenied naming its
  // address (the caller logs it and goes on accepting); nobody within `timeout` is
  // kDeadlineExceeded.
  Result<std::unique_ptr<Channel>> accept(Millis timeout);

 private:
  explicit Listener(PreAuthLimits limits) : limits_(limits) {}
  void accept_next();
  void admit(boost::asio::ip::tcp::socket socket, std::unique_ptr<boost::asio::io_context> io);
  void handshake(std::unique_ptr<Channel> channel, const std::string& address);
  // Queues what accept() returns next; refusals beyond a bound are only counted.
  void report(Result<std::unique_ptr<Channel>> outcome);

  PreAuthLimits limits_;
  boost::asio::io_context io_;  // the acceptor's, run by accept_thread_
  std::shared_ptr<boost::asio::ssl::context> tls_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::unique_ptr<boost::asio::io_context> next_io_;  // the next connection's own
  std::unique_ptr<boost::asio::ip::tcp::socket> next_socket_;
  std::unique_ptr<boost::asio::steady_timer> retry_timer_;
  std::thread accept_thread_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Result<std::unique_ptr<Channel>>> outcomes_;
  size_t queued_refusals_ = 0;
  size_t unreported_refusals_ = 0;
  std::map<std::string, int> pending_by_address_;
  std::set<Channel*> pending_;  // handshakes in progress, each on a detached thread
  bool closing_ = false;
};

}  // namespace collide::orchestrator::control
