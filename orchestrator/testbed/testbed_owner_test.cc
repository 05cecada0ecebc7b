#include "orchestrator/testbed/testbed_owner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <gtest/gtest.h>

namespace collide::orchestrator::testbed {
namespace {

class TestbedOwnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("collide-testbed-owner-" + std::to_string(getpid()));
    setenv("COLLIDE_TESTBED_STATE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("COLLIDE_TESTBED_STATE_DIR");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

// A child that waits to be killed: a run that still holds its testbed.
pid_t start_sleeper() {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  return child;
}

TEST_F(TestbedOwnerTest, ALiveOwnerKeepsItsTestbedAndIsNamed) {
  const pid_t child = start_sleeper();
  ASSERT_GT(child, 0);
  record_owner("tb1", child);
  const TestbedOwner owner = owner_of("tb1");
  EXPECT_EQ(owner.state, TestbedOwner::State::kRunning);
  EXPECT_EQ(owner.pid, child);
  const Status down = may_take_down("tb1");
  EXPECT_EQ(down.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(down.message().find("pid " + std::to_string(child)), std::string::npos) << down.message();
  const std::string exists = already_exists_message("tb1");
  EXPECT_NE(exists.find("pid " + std::to_string(child)), std::string::npos) << exists;
  EXPECT_NE(exists.find("stop it"), std::string::npos) << exists;
  EXPECT_EQ(exists.find("collide testbed down"), std::string::npos) << exists;

  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(owner_of("tb1").state, TestbedOwner::State::kGone);
  EXPECT_TRUE(owner_is_gone("tb1"));
  EXPECT_TRUE(may_take_down("tb1").ok());
  const std::string swept = already_exists_message("tb1");
  EXPECT_NE(swept.find("sweeps it"), std::string::npos) << swept;
}

TEST_F(TestbedOwnerTest, KeptAndUnrecordedTestbedsMayBeTakenDown) {
  record_kept("tb2");
  EXPECT_EQ(owner_of("tb2").state, TestbedOwner::State::kKept);
  EXPECT_TRUE(may_take_down("tb2").ok());
  EXPECT_NE(already_exists_message("tb2").find("collide testbed down tb2"), std::string::npos);
  EXPECT_EQ(owner_of("tb3").state, TestbedOwner::State::kUnknown);
  EXPECT_TRUE(may_take_down("tb3").ok());
  EXPECT_FALSE(owner_is_gone("tb3"));
}

}  // namespace
}  // namespace collide::orchestrator::testbed
