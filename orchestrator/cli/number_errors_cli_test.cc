// Numbers on the command line and in collide's own files that do not read, through the real
// binary: a message naming the field and the text, and a non-zero exit, where a bare parse used
// to abort the process.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "common/process.h"

namespace collide {
namespace {

namespace fs = std::filesystem;

class NumberErrorsCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-numbers-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A state directory named for an owner whose pid does not fit an int: the sweep reports it and
// fails, and sweeps on. (The namespace named does not exist, so nothing on this host is touched.)
TEST_F(NumberErrorsCliTest, SweepReportsAnOwnerPidThatDoesNotFit) {
  fs::create_directories(dir_ / "state" / "99999999999.1");
  auto out = process::run_command({COLLIDE_BIN, "inject", "--sweep", "--netns",
                                   "collide-numbers-no-such-ns", "--state-dir",
                                   (dir_ / "state").string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 1) << out->output;
  EXPECT_NE(out->output.find("99999999999.1: owner pid: 99999999999 is out of range"),
            std::string::npos)
      << out->output;
}

TEST_F(NumberErrorsCliTest, AgentRefusesAListenPortWithLetters) {
  auto out = process::run_command(
      {COLLIDE_BIN, "agent", "--listen", "127.0.0.1:80abc", "--certs", dir_.string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("--listen 127.0.0.1:80abc: port: '80abc' is not a non-negative whole "
                             "number"),
            std::string::npos)
      << out->output;
}

TEST_F(NumberErrorsCliTest, AgentRefusesAListenPortTooLarge) {
  auto out = process::run_command(
      {COLLIDE_BIN, "agent", "--listen", "127.0.0.1:99999999999", "--certs", dir_.string()});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(out->exit_code, 2) << out->output;
  EXPECT_NE(out->output.find("99999999999 is out of range (0 to 65535)"), std::string::npos)
      << out->output;
}

}  // namespace
}  // namespace collide
