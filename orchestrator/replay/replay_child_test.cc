// The agent's side of the replay child protocol against the real `collide replay-child`: a request
// it cannot play is refused with an answer that says why, and nothing else comes.
#include "orchestrator/replay/replay_child.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "tests/support/all_reduce_trace.h"

namespace collide::orchestrator::replay {
namespace {

using namespace std::chrono_literals;

TEST(ReplayChildTest, RefusesARequestWhoseTraceIsMissingAndSaysWhich) {
  auto child = ReplayChild::spawn({COLLIDE_BIN, "--log-level=off", "replay-child"});
  ASSERT_TRUE(child.ok()) << child.status().to_string();
  v1::ReplayCommand command;
  v1::ReplayRequest& r = *command.mutable_request();
  r.set_trace_file("/nonexistent/collide-child-test.trace");
  r.add_ranks(0);
  r.set_ranks_per_host(1);
  v1::ReplayNic* nic = r.add_nics();
  nic->set_port("afpacket:lo");
  nic->set_next_hop_mac("02:00:00:00:00:01");
  ASSERT_TRUE(child->send(command).ok());
  auto event = child->receive(30s);
  ASSERT_TRUE(event.ok()) << event.status().to_string();
  ASSERT_TRUE(event->has_value());
  ASSERT_TRUE((*event)->has_error()) << (*event)->DebugString();
  EXPECT_NE((*event)->error().message().find("/nonexistent/collide-child-test.trace"), std::string::npos)
      << (*event)->error().message();
  auto code = child->wait(10s);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 2);
}

TEST(ReplayChildTest, RefusesAGoBeforeAnyRequest) {
  auto child = ReplayChild::spawn({COLLIDE_BIN, "--log-level=off", "replay-child"});
  ASSERT_TRUE(child.ok()) << child.status().to_string();
  v1::ReplayCommand go;
  go.mutable_go();
  ASSERT_TRUE(child->send(go).ok());
  auto event = child->receive(30s);
  ASSERT_TRUE(event.ok()) << event.status().to_string();
  ASSERT_TRUE(event->has_value());
  EXPECT_TRUE((*event)->has_error());
  auto code = child->wait(10s);
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 2);
}

#ifdef COLLIDE_HAVE_DPDK
// The request's EAL arguments reach rte_eal_init: one the EAL does not know is refused by the EAL,
// and the refusal comes back as the child's answer.
TEST(ReplayChildTest, EalArgsReachTheEal) {
  const auto trace = std::filesystem::temp_directory_path() /
                     ("collide-child-eal-" + std::to_string(getpid()) + ".trace");
  testing::write_all_reduce_trace(trace.string(), 2, 4096, /*declare_comm=*/true);
  auto child = ReplayChild::spawn({COLLIDE_BIN, "--log-level=off", "replay-child"});
  ASSERT_TRUE(child.ok()) << child.status().to_string();
  v1::ReplayCommand command;
  v1::ReplayRequest& r = *command.mutable_request();
  r.set_trace_file(trace.string());
  r.add_ranks(0);
  r.set_ranks_per_host(1);
  v1::ReplayNic* nic = r.add_nics();
  nic->set_port("dpdk:net_null0");
  nic->set_next_hop_mac("02:00:00:00:00:01");
  r.add_eal_args("--no-such-eal-option");
  ASSERT_TRUE(child->send(command).ok());
  auto event = child->receive(60s);
  std::filesystem::remove(trace);
  ASSERT_TRUE(event.ok()) << event.status().to_string();
  ASSERT_TRUE(event->has_value());
  ASSERT_TRUE((*event)->has_error()) << (*event)->DebugString();
  const std::string& why = (*event)->error().message();
  EXPECT_NE(why.find("rte_eal_init"), std::string::npos) << why;
  EXPECT_NE(why.find("--no-such-eal-option"), std::string::npos) << why;
}
#endif

}  // namespace
}  // namespace collide::orchestrator::replay
