// A kill of a whole process tree, as systemd, Kubernetes and Slurm do it (freeze the cgroup, then
// SIGKILL every process in it), takes the guardian along with `collide inject`: the faults stay.
// The next collide command must find their undos on disk and perform them, and say so.
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Where cgroup v2 is mounted: /sys/fs/cgroup on a unified host, /sys/fs/cgroup/unified on a
// hybrid one. Empty if it is not.
fs::path cgroup2_root() {
  std::ifstream mounts("/proc/self/mounts");
  std::string device, mount_point, type, rest;
  while (mounts >> device >> mount_point >> type && std::getline(mounts, rest)) {
    if (type == "cgroup2") return mount_point;
  }
  return {};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool write_file(const fs::path& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  file.flush();
  return static_cast<bool>(file);
}

// Empty when cgroup v2 is mounted and writable (cgroup.kill is checked on the test's cgroup).
std::string missing_cgroup2() {
  const fs::path root = cgroup2_root();
  struct statfs fs_info {};
  if (root.empty() || statfs(root.c_str(), &fs_info) != 0 ||
      fs_info.f_type != CGROUP2_SUPER_MAGIC) {
    return "cgroup v2 is not mounted";
  }
  if (access(root.c_str(), W_OK) != 0) return root.string() + " is not writable";
  return "";
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

class WholeTreeKillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(missing_netns());
    COLLIDE_REQUIRE(missing_tool("tc"));
    COLLIDE_REQUIRE(missing_cgroup2());
    cgroup_ = cgroup2_root() / fmt::format("collide-wtk-{}", getpid());
    ASSERT_TRUE(fs::create_directory(cgroup_)) << cgroup_;
    if (!fs::exists(cgroup_ / "cgroup.kill") || !fs::exists(cgroup_ / "cgroup.freeze")) {
      fs::remove(cgroup_);
      COLLIDE_REQUIRE(std::string("this kernel's cgroup v2 has no cgroup.kill or cgroup.freeze"));
    }
    auto a = TestNetns::create("wka");
    auto b = TestNetns::create("wkb");
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = std::move(a).value();
    b_ = std::move(b).value();
    ASSERT_TRUE(create_veth_pair(*a_, "a0", *b_, "b0").ok());
    ASSERT_TRUE(configure_interface(*a_, "a0", "10.79.0.1/24").ok());
    ASSERT_TRUE(configure_interface(*b_, "b0", "10.79.0.2/24").ok());
    state_dir_ = fs::temp_directory_path() / fmt::format("collide-wtk-state-{}", getpid());
    fs::remove_all(state_dir_);
  }
  void TearDown() override {
    if (!cgroup_.empty() && fs::exists(cgroup_)) {
      write_file(cgroup_ / "cgroup.kill", "1");
      wait_until([&] { return cgroup_procs().empty(); }, 5s);
      fs::remove(cgroup_);
    }
    a_.reset();
    b_.reset();
    fs::remove_all(state_dir_);
  }

  std::vector<int> cgroup_procs() {
    std::vector<int> pids;
    std::istringstream in(read_file(cgroup_ / "cgroup.procs"));
    for (int pid; in >> pid;) pids.push_back(pid);
    return pids;
  }
  bool link_up(const std::string& ns, const std::string& dev) {
    return output_of({"ip", "-n", ns, "link", "show", "dev", dev}).find(",UP") != std::string::npos;
  }
  bool has_collide_qdisc(const std::string& ns) {
    return output_of({"tc", "-n", ns, "qdisc", "show"}).find("c011:") != std::string::npos;
  }

  fs::path cgroup_;
  std::unique_ptr<TestNetns> a_, b_;
  fs::path state_dir_;
};

TEST_F(WholeTreeKillTest, TheNextCollideUndoesFaultsWhoseGuardianWasKilledWithTheTree) {
  // The shell joins the cgroup, then becomes collide: collide and its guardian start inside it.
  auto inject = ChildProcess::spawn(
      {"sh", "-c",
       fmt::format("echo $$ > {} && exec {} inject --netns {} --dev a0 --direction egress "
                   "--rate 100mbit --flap 60s --state-dir {}",
                   (cgroup_ / "cgroup.procs").string(), COLLIDE_BIN, a_->name(),
                   state_dir_.string())});
  ASSERT_TRUE(inject.ok());
  ASSERT_TRUE(wait_until(
      [&] { return !link_up(a_->name(), "a0") && has_collide_qdisc(a_->name()); }, 10s))
      << "the faults did not come; output: " << inject->remaining_output();
  ASSERT_GE(cgroup_procs().size(), 2u) << "collide and its guardian are in the cgroup";

  ASSERT_TRUE(write_file(cgroup_ / "cgroup.freeze", "1"));
  ASSERT_TRUE(wait_until(
      [&] { return read_file(cgroup_ / "cgroup.events").find("frozen 1") != std::string::npos; },
      5s));
  ASSERT_TRUE(write_file(cgroup_ / "cgroup.kill", "1"));
  inject->wait(5s).ok();
  ASSERT_TRUE(wait_until([&] { return cgroup_procs().empty(); }, 5s));
  std::this_thread::sleep_for(500ms);
  ASSERT_FALSE(link_up(a_->name(), "a0")) << "no process was left to undo the flap";
  ASSERT_TRUE(has_collide_qdisc(a_->name())) << "no process was left to undo the rate limit";

  // The next collide command, any fault anywhere, finds and undoes what the dead one left.
  auto next = run_command({COLLIDE_BIN, "inject", "--netns", b_->name(), "--dev", "b0",
                           "--direction", "egress", "--rate", "1gbit", "--duration", "200ms",
                           "--state-dir", state_dir_.string()});
  ASSERT_TRUE(next.ok());
  std::cout << next->output;
  EXPECT_EQ(next->exit_code, 0) << next->output;
  EXPECT_NE(next->output.find("collide inject: swept what a dead collide left: undid link a0"),
            std::string::npos)
      << next->output;
  EXPECT_NE(next->output.find("egress tbf"), std::string::npos) << next->output;
  EXPECT_TRUE(link_up(a_->name(), "a0"));
  EXPECT_FALSE(has_collide_qdisc(a_->name()));
  EXPECT_TRUE(fs::is_empty(state_dir_)) << "the swept owner's state is gone";
}

}  // namespace
}  // namespace collide::testing
