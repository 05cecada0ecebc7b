#include "orchestrator/control/tls_channel.h"

#include <sys/stat.h>
#include <unistd.h>

#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "collide/agent.pb.h"

namespace collide::orchestrator::control {
namespace {

using namespace std::chrono_literals;

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
  EXPECT_EQ(served.get().code(), StatusCode::kPermissionDenied);
}

TEST_F(TlsChannelTest, TheClientRefusesAnAgentOfAnotherCa) {
  auto listener = Listener::create("127.0.0.1", 0, agent_files(theirs()));
  ASSERT_TRUE(listener.ok());
  auto served = serve_one(**listener);
  auto channel = Channel::connect("127.0.0.1", (*listener)->port(), orchestrator_files(ours()), 5s);
  EXPECT_FALSE(channel.ok());
  EXPECT_FALSE(served.get().ok());
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
  EXPECT_FALSE(closed.ok());
}

}  // namespace
}  // namespace collide::orchestrator::control
