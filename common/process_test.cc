#include "common/process.h"

#include <gtest/gtest.h>

namespace collide::process {
namespace {

TEST(RunCommand, CapturesOutputAndExitCode) {
  auto result = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->output, "out\nerr\n");
}

TEST(RunCommand, FeedsItsInputToTheProgram) {
  auto result = run_command({"cat"}, "line 1\nline 2\n");
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->output, "line 1\nline 2\n");
}

// The input is written whole before the program starts: more than a pipe holds must not block
// either side while the program echoes it back.
TEST(RunCommand, TakesAnInputLargerThanAPipe) {
  const std::string input(1 << 20, 'x');
  auto result = run_command({"cat"}, input);
  ASSERT_TRUE(result.ok()) << result.status().to_string();
  EXPECT_EQ(result->output.size(), input.size());
}

TEST(RunCommand, NamesAProgramThatCannotStart) {
  auto result = run_command({"/nonexistent/collide-no-such-program"}, "x");
  // posix_spawn reports a missing program either as an error or as the child's exit 127.
  EXPECT_TRUE(!result.ok() || result->exit_code == 127);
}

TEST(RunChecked, ANonZeroExitQuotesTheCommandAndWhatItPrinted) {
  EXPECT_TRUE(run_checked({"cat"}, "fine\n").ok());
  const Status failed = run_checked({"sh", "-c", "cat; exit 3"}, "said this\n");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("`sh -c cat; exit 3` exited with 3: said this"),
            std::string::npos)
      << failed.message();
  // The output's last newline is not part of the message.
  EXPECT_EQ(failed.message().back(), 's') << failed.message();
}

}  // namespace
}  // namespace collide::process
