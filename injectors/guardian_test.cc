#include "injectors/guardian.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/status_matchers.h"

namespace collide::injectors {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& tag) {
  const fs::path dir = fs::temp_directory_path() / ("collide-guardian-" + tag + "-" +
                                                    std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool wait_for_file(const fs::path& path, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fs::exists(path);
}

// Undos run `ip` and `tc`, found on PATH. These tests put a stand-in `ip` first on PATH that
// touches a file named after the device it was asked to bring up (and fails for "fail0"), so
// that what ran can be seen without root. Like iproute2's, it reads its commands from standard
// input with `-batch -`, goes on past a failure with `-force` and names each failed line.
class FakeIp {
 public:
  explicit FakeIp(const fs::path& dir) : dir_(dir), bin_(dir.string() + "-bin") {
    fs::create_directories(bin_);
    const fs::path script = bin_ / "ip";
    // `ip link set dev NAME up`: NAME is the second-last argument.
    std::ofstream(script) << "#!/bin/sh\n"
                             "up() {\n"
                             "  dev=$(echo \"$*\" | awk '{print $(NF-1)}')\n"
                             "  [ \"$dev\" = fail0 ] && { echo \"Cannot find device $dev\" >&2; return 1; }\n"
                             "  touch \""
                          << dir_.string() << "/$dev\"\n"
                             "}\n"
                             "case \"$*\" in *-batch*) ;; *) up \"$@\"; exit $? ;; esac\n"
                             "n=0; rc=0\n"
                             "while read -r line; do\n"
                             "  n=$((n + 1))\n"
                             "  up $line || { echo \"Command failed -:$n\" >&2; rc=1; }\n"
                             "done\n"
                             "exit $rc\n";
    fs::permissions(script, fs::perms(0755));
    const char* path = std::getenv("PATH");
    old_path_ = path ? path : "";
    setenv("PATH", (bin_.string() + ":" + old_path_).c_str(), 1);
  }
  ~FakeIp() {
    setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(bin_);
  }

 private:
  fs::path dir_, bin_;
  std::string old_path_;
};

// An undo whose effect is the file dir/<dev> (with FakeIp in place).
UndoAction touch(const fs::path& path) {
  return UndoAction{"link " + path.filename().string() + " down", "", {},
                    {UndoStep::set_link_up(path.filename().string())}};
}

TEST(UndoRecord, RoundTripsThroughItsEncoding) {
  UndoAction action{"veth0 in a: egress tbf", "a", {"veth0", "collide-ifb0"},
                    {UndoStep::delete_qdisc("veth0", "root"), UndoStep::delete_ifb("collide-ifb0"),
                     UndoStep::set_link_up("veth0")}};
  const std::string encoded = encode_undo(action);
  EXPECT_EQ(encoded.find('\n'), std::string::npos) << "the pipe protocol is one record per line";
  auto decoded = decode_undo(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->description, action.description);
  EXPECT_EQ(decoded->netns, action.netns);
  EXPECT_EQ(decoded->devices, action.devices);
  ASSERT_EQ(decoded->steps.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(undo_argv("a", decoded->steps[i]), undo_argv("a", action.steps[i]));
  }
}

TEST(UndoRecord, RejectsMalformedRecords) {
  EXPECT_THAT(decode_undo("{"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(decode_undo(R"({"format":2,"description":"x"})"),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(decode_undo(R"({"format":2,"description":1,"netns":"","devices":[],"steps":[]})"),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(decode_undo(R"({"format":3,"description":"x","netns":"","devices":[],"steps":[]})"),
              StatusIs(StatusCode::kInvalidArgument));
  auto bad_netns = decode_undo(R"({"format":2,"description":"x","netns":"-all","devices":[],"steps":[]})");
  ASSERT_THAT(bad_netns, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad_netns.status().message().find("netns \"-all\""), std::string::npos);
}

// Earlier versions recorded argv lists; a record of that kind is refused, never run.
TEST(UndoRecord, RefusesARecordOfCommands) {
  auto decoded = decode_undo(
      R"({"description":"link a0 down","netns":"","devices":[],"commands":[["touch","/x"]]})");
  ASSERT_THAT(decoded, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_NE(decoded.status().message().find("no longer runs commands"), std::string::npos)
      << decoded.status().message();
  EXPECT_NE(decoded.status().message().find("link a0 down"), std::string::npos);
}

TEST(UndoRecord, PerformReportsEachFailingStep) {
  const fs::path dir = fresh_dir("perform");
  FakeIp fake(dir);
  UndoAction alone{"one", "", {}, {UndoStep::set_link_up("fail0")}};
  auto failures = perform_undo(alone);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("`ip link set dev fail0 up` exited with 1: Cannot find device fail0"),
            std::string::npos)
      << failures[0];
  // Several steps of ip's run as one batch, which names the line that failed.
  UndoAction batch{"mixed", "", {},
                   {UndoStep::set_link_up("ran0"), UndoStep::set_link_up("fail0"),
                    UndoStep::set_link_up("ran1")}};
  failures = perform_undo(batch);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0], "mixed: `ip link set dev fail0 up` failed: Cannot find device fail0");
  EXPECT_TRUE(fs::exists(dir / "ran0"));
  EXPECT_TRUE(fs::exists(dir / "ran1")) << "a failing step must not stop the ones after it";
  fs::remove_all(dir);
}

TEST(Guardian, RefusesAStepThatFailsItsChecks) {
  const fs::path dir = fresh_dir("check");
  auto guardian = Guardian::start({dir});
  ASSERT_TRUE(guardian.ok()) << guardian.status().to_string();
  auto id = (*guardian)->register_undo(UndoAction{"x", "", {}, {UndoStep::delete_ifb("eth0")}});
  ASSERT_THAT(id, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(id.status().message().find("dev \"eth0\" is not a collide ifb device"),
            std::string::npos)
      << id.status().message();
  guardian->reset();
  fs::remove_all(dir);
}

TEST(NetnsCommand, AddsTheNamespaceOnlyWhenGiven) {
  EXPECT_EQ(netns_command("tc", "", {"qdisc", "show"}),
            (std::vector<std::string>{"tc", "qdisc", "show"}));
  EXPECT_EQ(netns_command("ip", "a", {"link"}), (std::vector<std::string>{"ip", "-n", "a", "link"}));
}

// An orphaned guardian killed with its tree stays a zombie until init reaps it; it undoes nothing,
// so its owner's state is the sweep's to finish.
TEST(ProcessAlive, AZombieIsNotAlive) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  const auto start = process_start_time(child);
  ASSERT_TRUE(start.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // exited, not reaped
  EXPECT_FALSE(process_alive(child, *start));
  EXPECT_TRUE(process_alive(getpid(), *process_start_time(getpid())));
  EXPECT_FALSE(process_alive(getpid(), *process_start_time(getpid()) + 1));
  waitpid(child, nullptr, 0);
}

TEST(ProcessStartTime, KnowsThisProcessAndNotAMissingOne) {
  EXPECT_TRUE(process_start_time(getpid()).has_value());
  EXPECT_FALSE(process_start_time(0x3fffffff).has_value());
}

TEST(Guardian, CleanStopUndoesInTheParentAndLeavesNoState) {
  const fs::path dir = fresh_dir("clean");
  FakeIp fake(dir);
  fs::path owner;
  int guardian_pid = -1;
  {
    auto guardian = Guardian::start({dir});
    ASSERT_TRUE(guardian.ok()) << guardian.status().to_string();
    owner = (*guardian)->owner_dir();
    guardian_pid = (*guardian)->guardian_pid();
    auto first = (*guardian)->register_undo(touch(dir / "first"));
    auto second = (*guardian)->register_undo(touch(dir / "second"));
    ASSERT_TRUE(first.ok() && second.ok());
    EXPECT_EQ((*guardian)->pending(), 2u);
    EXPECT_TRUE(fs::exists(owner / "1.json")) << "pending undos are on disk for the sweep";
    (*guardian)->undo(*first);
    EXPECT_TRUE(fs::exists(dir / "first"));
    EXPECT_FALSE(fs::exists(owner / "1.json"));
    (*guardian)->forget(*second);
    EXPECT_EQ((*guardian)->pending(), 0u);
  }
  EXPECT_FALSE(fs::exists(dir / "second")) << "a forgotten undo must not run";
  EXPECT_FALSE(fs::exists(owner));
  EXPECT_NE(kill(guardian_pid, 0), 0) << "the guardian exits with its parent's clean stop";
  fs::remove_all(dir);
}

// The point of the guardian: a process killed with SIGKILL cannot clean up, its guardian does.
TEST(Guardian, UndoesEverythingWhenItsParentIsKilled) {
  const fs::path dir = fresh_dir("killed");
  FakeIp fake(dir);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto guardian = Guardian::start({dir});
    if (!guardian.ok()) _exit(3);
    if (!(*guardian)->register_undo(touch(dir / "a")).ok()) _exit(4);
    if (!(*guardian)->register_undo(touch(dir / "b")).ok()) _exit(5);
    auto forgotten = (*guardian)->register_undo(touch(dir / "forgotten"));
    if (!forgotten.ok()) _exit(6);
    (*guardian)->forget(*forgotten);
    raise(SIGKILL);
    _exit(7);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  const auto killed_at = std::chrono::steady_clock::now();
  EXPECT_TRUE(wait_for_file(dir / "a", std::chrono::milliseconds(1000)));
  EXPECT_TRUE(wait_for_file(dir / "b", std::chrono::milliseconds(1000)));
  const auto took = std::chrono::steady_clock::now() - killed_at;
  EXPECT_LT(took, std::chrono::seconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(fs::exists(dir / "forgotten"));
  // Its state directory goes too once every undo ran.
  bool any_owner_left = false;
  for (int i = 0; i < 50; ++i) {
    any_owner_left = false;
    for (const auto& entry : fs::directory_iterator(dir)) any_owner_left |= entry.is_directory();
    if (!any_owner_left) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(any_owner_left);
  fs::remove_all(dir);
}

TEST(Guardian, SurvivesSigintAndUndoesOnSigterm) {
  const fs::path dir = fresh_dir("signals");
  FakeIp fake(dir);
  auto guardian = Guardian::start({dir});
  ASSERT_TRUE(guardian.ok());
  ASSERT_TRUE((*guardian)->register_undo(touch(dir / "t")).ok());
  const int pid = (*guardian)->guardian_pid();
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(fs::exists(dir / "t")) << "SIGINT (a Ctrl-C) must not end the guardian";
  kill(pid, SIGTERM);
  EXPECT_TRUE(wait_for_file(dir / "t", std::chrono::milliseconds(1000)));
  (*guardian)->forget(1);
  guardian->reset();
  fs::remove_all(dir);
}

TEST(Guardian, FailsClearlyWhenTheStateDirectoryCannotBeMade) {
  auto guardian = Guardian::start({"/proc/collide-cannot-be-here"});
  ASSERT_THAT(guardian, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(guardian.status().message().find("/proc/collide-cannot-be-here"), std::string::npos);
}

}  // namespace
}  // namespace collide::injectors
