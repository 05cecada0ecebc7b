#include "orchestrator/control/tls_channel.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "collide/agent.pb.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::control {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A TCP connection to 127.0.0.1:port from `source` that never says anything (what a port scanner
// or an attacker holding the agent's door open does). -1 when it cannot connect.
int open_idle_connection(uint16_t port, const char* source = "127.0.0.1") {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the other side closed `fd` within `within` (end of stream or a reset).
bool closed_by_peer(int fd, std::chrono::milliseconds within) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(within.count())) <= 0) return false;
  char byte = 0;
  const ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno == ECONNRESET);
}

// Calls accept() the way the agent does, until stopped, keeping what it reported.
class AcceptLoop {
 public:
  explicit AcceptLoop(Listener& listener)
      : thread_([this, &listener] {
          while (!stop_.load()) {
            auto channel = listener.accept(50ms);
            if (channel.ok()) {
              std::lock_guard lock(mutex_);
              channels_.push_back(std::move(channel).value());
            } else if (channel.status().code() != StatusCode::kDeadlineExceeded) {
              std::lock_guard lock(mutex_);
              refusals_.push_back(channel.status().message());
            }
          }
        }) {}
  ~AcceptLoop() {
    stop_.store(true);
    thread_.join();
  }
  std::vector<std::string> refusals() {
    std::lock_guard lock(mutex_);
    return refusals_;
  }
  size_t channels() {
    std::lock_guard lock(mutex_);
    return channels_.size();
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::unique_ptr<Channel>> channels_;
  std::vector<std::string> refusals_;
  std::thread thread_;
};

class TlsChannelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("collide-tls-test-" + std::to_string(getpid())));
    ASSERT_TRUE(generate_certs(*dir_ / "ours").ok());
    ASSERT_TRUE(generate_certs(*dir_ / "theirs").ok());  // another CA altogether
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static std::filesystem::path ours() { return *dir_ / "ours"; }
  static std::filesystem::path theirs() { return *dir_ / "theirs"; }

  // Serves one connection on a thread: accept, then echo one clock probe. Returns accept's status.
  static std::future<Status> serve_one(Listener& listener) {
    return std::async(std::launch::async, [&listener]() -> Status {
      auto channel = listener.accept(10s);
      if (!channel.ok()) return channel.status();
      auto request = (*channel)->receive_message<v1::AgentRequest>(5s);
      if (!request.ok()) return request.status();
      if (!request->has_value()) return deadline_exceeded("no request");
      v1::AgentReply reply;
      reply.mutable_clock()->set_orchestrator_send_ns((*request)->clock().orchestrator_send_ns());
      reply.mutable_clock()->set_agent_receive_ns(1);
      return (*channel)->send(reply);
    });
  }

  // Whether a client with these files gets an answer from the server: false when the handshake
  // or the first exchange fails (with TLS 1.3 a refused client certificate shows only after the
  // client's side of the handshake has finished).
  static bool client_gets_answer(const TlsFiles& files, uint16_t port) {
    auto channel = Channel::connect("127.0.0.1", port, files, 5s);
    if (!channel.ok()) return false;
    v1::AgentRequest probe;
    probe.mutable_clock()->set_orchestrator_send_ns(42);
    if (!(*channel)->send(probe).ok()) return false;
    auto reply = (*channel)->receive_message<v1::AgentReply>(5s);
    return reply.ok() && reply->has_value() && (*reply)->clock().orchestrator_send_ns() == 42;
  }

  static std::filesystem::path* dir_;
};

std::filesystem::path* TlsChannelTest::dir_ = nullptr;

TEST_F(TlsChannelTest, GeneratesEveryFileReadableByItsOwnerOnly) {
  for (const char* name : {"ca.pem", "ca.key", "agent.pem", "agent.key", "orchestrator.pem",
                           "orchestrator.key"}) {
    struct stat st {};
    ASSERT_EQ(stat((ours() / name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << name;
    EXPECT_GT(st.st_size, 100) << name;
  }
}

TEST_F(TlsChannelTest, MutuallyAuthenticatedPeersExchangeMessages) {
  auto listener = Listener::create("127.0.0.1", 0, agent_files(ours()));
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  ASSERT_NE((*listener)->port(), 0);
  auto served = serve_one(**listener);
  EXPECT_TRUE(client_gets_answer(orchestrator_files(ours()), (*listener)->port()));
  const Status s = served.get();
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(TlsChannelTest, RefusesAClientWithoutACertificate) {
  auto listener = Listener::create("127.0.0.1", 0, agent_files(ours()));
  ASSERT_TRUE(listener.ok());
  auto served = serve_one(**listener);
  TlsFiles no_cert;
  no_cert.ca = ours() / "ca.pem";  // it trusts the agent, but has nothing to show
  EXPECT_FALSE(client_gets_answer(no_cert, (*listener)->port()));
  const Status s = served.get();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.message();
  EXPECT_NE(s.message().find("127.0.0.1"), std::string::npos) << s.message();  // names the peer
}

TEST_F(TlsChannelTest, RefusesAClientWhoseCertificateComesFromAnotherCa) {
  auto listener = Listener::create("127.0.0.1", 0, agent_files(ours()));
  ASSERT_TRUE(listener.ok());
  auto served = serve_one(**listener);
  TlsFiles stranger = orchestrator_files(theirs());
  stranger.ca = ours() / "ca.pem";
  EXPECT_FALSE(client_gets_answer(stranger, (*listener)->port()));
  const Status s = served.get();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  // Both CAs are called "collide CA": the refusal must say what is wrong in words a person acts
  // on, not in OpenSSL's ("EVP lib").
  EXPECT_NE(s.message().find("not signed by our CA"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("EVP"), std::string::npos) << s.message();
}

TEST_F(TlsChannelTest, TheClientRefusesAnAgentOfAnotherCa) {
  auto listener = Listener::create("127.0.0.1", 0, agent_files(theirs()));
  ASSERT_TRUE(listener.ok());
  auto served = serve_one(**listener);
  auto channel = Channel::connect("127.0.0.1", (*listener)->port(), orchestrator_files(ours()), 5s);
  ASSERT_THAT(channel, StatusIs(StatusCode::kPermissionDenied));
  EXPECT_NE(channel.status().message().find("not signed by our CA"), std::string::npos)
      << channel.status().message();
  EXPECT_THAT(served.get(), StatusIs(StatusCode::kPermissionDenied));
}

// A copy of our certificates in a folder of its own, to spoil.
std::filesystem::path copy_of(const std::filesystem::path& from, const std::string& name) {
  const auto to = from.parent_path() / name;
  std::filesystem::remove_all(to);
  std::filesystem::copy(from, to);
  return to;
}

TEST_F(TlsChannelTest, RefusesAPrivateKeyOthersCanRead) {
  const auto dir = copy_of(ours(), "loose-key");
  std::filesystem::permissions(dir / "agent.key", std::filesystem::perms::group_read,
                               std::filesystem::perm_options::add);
  auto listener = Listener::create("127.0.0.1", 0, agent_files(dir));
  ASSERT_THAT(listener, StatusIs(StatusCode::kPermissionDenied));
  const std::string& m = listener.status().message();
  EXPECT_NE(m.find((dir / "agent.key").string()), std::string::npos) << m;
  EXPECT_NE(m.find("readable by group or others"), std::string::npos) << m;
  // The orchestrator's key likewise.
  std::filesystem::permissions(dir / "orchestrator.key", std::filesystem::perms::others_read,
                               std::filesystem::perm_options::add);
  auto channel = Channel::connect("127.0.0.1", 1, orchestrator_files(dir), 1s);
  ASSERT_THAT(channel, StatusIs(StatusCode::kPermissionDenied));
  EXPECT_NE(channel.status().message().find("readable by group or others"), std::string::npos)
      << channel.status().message();
}

TEST_F(TlsChannelTest, AnEmptyOrIncompleteCertsFolderNamesWhatIsMissing) {
  const auto empty = *dir_ / "empty";
  std::filesystem::create_directories(empty);
  auto listener = Listener::create("127.0.0.1", 0, agent_files(empty));
  ASSERT_THAT(listener, StatusIs(StatusCode::kNotFound));
  std::string m = listener.status().message();
  for (const char* name : {"ca.pem", "agent.pem", "agent.key"}) {
    EXPECT_NE(m.find(name), std::string::npos) << m;
  }
  EXPECT_NE(m.find("collide certs generate"), std::string::npos) << m;

  const auto incomplete = copy_of(ours(), "incomplete");
  std::filesystem::remove(incomplete / "agent.key");
  listener = Listener::create("127.0.0.1", 0, agent_files(incomplete));
  ASSERT_THAT(listener, StatusIs(StatusCode::kNotFound));
  m = listener.status().message();
  EXPECT_NE(m.find((incomplete / "agent.key").string() + " is missing"), std::string::npos) << m;
  EXPECT_EQ(m.find("agent.pem"), std::string::npos) << m;
}

TEST_F(TlsChannelTest, AReceiveThatTimesOutLosesNothingAndAClosedPeerIsAnError) {
  auto listener = Listener::create("127.0.0.1", 0, agent_files(ours()));
  ASSERT_TRUE(listener.ok());
  std::promise<void> may_send;
  auto server = std::async(std::launch::async, [&]() -> Status {
    auto channel = (*listener)->accept(10s);
    if (!channel.ok()) return channel.status();
    may_send.get_future().wait();
    v1::AgentReply reply;
    reply.mutable_progress()->set_ops_done(7);
    COLLIDE_RETURN_IF_ERROR((*channel)->send(reply));
    return {};  // the channel closes here
  });
  auto channel = Channel::connect("127.0.0.1", (*listener)->port(), orchestrator_files(ours()), 5s);
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  auto nothing = (*channel)->receive_message<v1::AgentReply>(50ms);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->has_value());
  may_send.set_value();
  auto reply = (*channel)->receive_message<v1::AgentReply>(5s);
  ASSERT_TRUE(reply.ok() && reply->has_value()) << reply.status().message();
  EXPECT_EQ((*reply)->progress().ops_done(), 7u);
  EXPECT_TRUE(server.get().ok());
  auto closed = (*channel)->receive_message<v1::AgentReply>(5s);
  EXPECT_THAT(closed, StatusIs(StatusCode::kUnavailable));
}

// Handshakes run side by side: peers that connect and say nothing do not hold the door shut for an
// orchestrator that comes after them.
TEST_F(TlsChannelTest, IdleConnectionsDoNotDelayAnAuthenticatedPeer) {
  auto listener = Listener::create("127.0.0.1", 0, agent_files(ours()));
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(open_idle_connection((*listener)->port()));
  for (int fd : idle) ASSERT_GE(fd, 0);
  auto served = serve_one(**listener);
  const auto start = Clock::now();
  EXPECT_TRUE(client_gets_answer(orchestrator_files(ours()), (*listener)->port()));
  EXPECT_LT(Clock::now() - start, 2s);  // a handshake on loopback takes milliseconds
  const Status s = served.get();
  EXPECT_TRUE(s.ok()) << s.message();
  for (int fd : idle) close(fd);
}

TEST_F(TlsChannelTest, AnIdleConnectionIsClosedAfterThePreAuthenticationTimeout) {
  PreAuthLimits limits;
  limits.handshake_timeout = 300ms;
  auto listener = Listener::create("127.0.0.1", 0, agent_files(ours()), limits);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  AcceptLoop loop(**listener);
  const int fd = open_idle_connection((*listener)->port());
  ASSERT_GE(fd, 0);
  const auto start = Clock::now();
  EXPECT_TRUE(closed_by_peer(fd, 3s));
  const auto took = Clock::now() - start;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2s);
  close(fd);
  std::this_thread::sleep_for(100ms);  // the refusal reaches accept()
  const auto refusals = loop.refusals();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_NE(refusals[0].find("127.0.0.1"), std::string::npos) << refusals[0];
  EXPECT_NE(refusals[0].find("took too long"), std::string::npos) << refusals[0];
}

TEST_F(TlsChannelTest, UnauthenticatedConnectionsOverTheCapsAreClosedAtOnce) {
  PreAuthLimits limits;
  limits.handshake_timeout = 10s;  // longer than the test: only a cap closes a connection here
  limits.per_address = 2;
  limits.total = 3;
  auto listener = Listener::create("127.0.0.1", 0, agent_files(ours()), limits);
  ASSERT_TRUE(listener.ok()) << listener.status().message();
  AcceptLoop loop(**listener);
  const uint16_t port = (*listener)->port();
  const int a1 = open_idle_connection(port, "127.0.0.1");
  const int a2 = open_idle_connection(port, "127.0.0.1");
  const int a3 = open_idle_connection(port, "127.0.0.1");  // a third from one address
  ASSERT_GE(a3, 0);
  EXPECT_TRUE(closed_by_peer(a3, 1s));
  const int b1 = open_idle_connection(port, "127.0.0.2");  // another address: room for one more
  const int c1 = open_idle_connection(port, "127.0.0.3");  // but not for a fourth in all
  ASSERT_GE(c1, 0);
  EXPECT_TRUE(closed_by_peer(c1, 1s));
  for (int fd : {a1, a2, b1}) EXPECT_FALSE(closed_by_peer(fd, 100ms));
  const auto refusals = loop.refusals();
  ASSERT_EQ(refusals.size(), 2u);
  EXPECT_NE(refusals[0].find("127.0.0.1"), std::string::npos) << refusals[0];
  EXPECT_NE(refusals[1].find("127.0.0.3"), std::string::npos) << refusals[1];
  // Once they go, their slots are free again for an orchestrator.
  for (int fd : {a1, a2, a3, b1, c1}) close(fd);
  std::this_thread::sleep_for(200ms);
  auto channel = Channel::connect("127.0.0.1", port, orchestrator_files(ours()), 2s);
  EXPECT_TRUE(channel.ok()) << channel.status().message();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(loop.channels(), 1u);
}

}  // namespace
}  // namespace collide::orchestrator::control
