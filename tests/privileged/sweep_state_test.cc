// The sweep acts on state files only when they are root's (the running user's) and writable by no
// one else, and only on the operations collide records: a planted file must never make root run
// a command. Each case plants a record of a dead owner and runs `collide inject --sweep`.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/command.h"
#include "tests/support/netns.h"
#include "tests/support/privileged.h"

namespace collide::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uid_t kNobody = 65534;

class SweepStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(missing_netns());
    auto ns = TestNetns::create("sst");
    ASSERT_TRUE(ns.ok());
    ns_ = std::move(ns).value();
    ASSERT_TRUE(
        run_checked({"ip", "-n", ns_->name(), "link", "add", "s0", "type", "veth", "peer", "name", "s1"})
            .ok());
    state_dir_ = fs::temp_directory_path() / fmt::format("collide-sst-state-{}", getpid());
    fs::remove_all(state_dir_);
    fs::create_directories(state_dir_);
    fs::permissions(state_dir_, fs::perms(0755));
    // pid 1 did not start at tick 1: an owner that is dead.
    owner_ = state_dir_ / "1.1";
    fs::create_directories(owner_);
    fs::permissions(owner_, fs::perms(0700));
    marker_ = state_dir_.parent_path() / fmt::format("collide-sst-ran-{}", getpid());
    fs::remove(marker_);
  }
  void TearDown() override {
    ns_.reset();
    fs::remove_all(state_dir_);
    fs::remove(marker_);
  }

  // A record in the format of earlier versions: a list of commands to run.
  std::string command_record() const {
    return json{{"description", "link s0 down"},
                {"netns", ns_->name()},
                {"devices", json::array({"s0"})},
                {"commands", json::array({json::array({"touch", marker_.string()})})}}
        .dump();
  }
  fs::path plant(const std::string& text, mode_t mode = 0600) {
    const fs::path file = owner_ / "1.json";
    std::ofstream(file) << text << "\n";
    fs::permissions(file, static_cast<fs::perms>(mode));
    return file;
  }
  std::string sweep() {
    auto r = run_command({COLLIDE_BIN, "inject", "--sweep", "--netns", ns_->name(),
                          "--state-dir", state_dir_.string()});
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->output : "";
  }
  bool link_up() {
    return output_of({"ip", "-n", ns_->name(), "link", "show", "dev", "s0"}).find(",UP") !=
           std::string::npos;
  }

  std::unique_ptr<TestNetns> ns_;
  fs::path state_dir_, owner_, marker_;
};

TEST_F(SweepStateTest, AStateFileOwnedByAnotherUserIsRefusedAndNothingRuns) {
  const fs::path file = plant(command_record());
  ASSERT_EQ(chown(file.c_str(), kNobody, kNobody), 0);
  const std::string output = sweep();
  std::cout << output;
  EXPECT_FALSE(fs::exists(marker_)) << "a command from nobody's file ran as root";
  EXPECT_NE(output.find(file.string() + ": owned by uid 65534"), std::string::npos) << output;
  EXPECT_TRUE(fs::exists(file)) << "a refused file is left for people to look at";
}

TEST_F(SweepStateTest, AnOwnerFolderOfAnotherUserIsRefused) {
  const fs::path file = plant(command_record());
  ASSERT_EQ(chown(owner_.c_str(), kNobody, kNobody), 0);
  const std::string output = sweep();
  EXPECT_FALSE(fs::exists(marker_));
  EXPECT_NE(output.find(owner_.string() + ": owned by uid 65534"), std::string::npos) << output;
}

TEST_F(SweepStateTest, AGroupWritableStateFileIsRefused) {
  const fs::path file = plant(command_record(), 0620);
  const std::string output = sweep();
  std::cout << output;
  EXPECT_FALSE(fs::exists(marker_));
  EXPECT_NE(output.find(file.string() + ": writable by group or others"), std::string::npos)
      << output;
}

TEST_F(SweepStateTest, ARecordOfCommandsIsRefusedWithHowToCleanUp) {
  const fs::path file = plant(command_record());
  const std::string output = sweep();
  std::cout << output;
  EXPECT_FALSE(fs::exists(marker_)) << "collide ran a command it read from a file";
  EXPECT_NE(output.find(file.string() + ": an undo record of an earlier collide"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("remove " + owner_.string()), std::string::npos) << output;
}

TEST_F(SweepStateTest, AnOperationOutsideTheKnownSetIsRefused) {
  const fs::path file = plant(json{{"format", 2},
                                   {"description", "x"},
                                   {"netns", ns_->name()},
                                   {"devices", json::array({"s0"})},
                                   {"steps", json::array({{{"op", "run"}, {"argv", {"touch", marker_.string()}}}})}}
                                  .dump());
  const std::string output = sweep();
  std::cout << output;
  EXPECT_FALSE(fs::exists(marker_));
  EXPECT_NE(output.find(file.string() + ": unknown undo operation \"run\""), std::string::npos)
      << output;
}

TEST_F(SweepStateTest, AFieldThatCouldBeReadAsAnOptionIsRefused) {
  const fs::path file = plant(json{{"format", 2},
                                   {"description", "x"},
                                   {"netns", ns_->name()},
                                   {"devices", json::array({"s0"})},
                                   {"steps", {{{"op", "set-link-up"}, {"dev", "-batch"}}}}}
                                  .dump());
  const std::string output = sweep();
  EXPECT_NE(output.find(file.string() + ": dev \"-batch\" is not an interface name"),
            std::string::npos)
      << output;
}

TEST_F(SweepStateTest, ALegitimateRecordIsUndone) {
  ASSERT_FALSE(link_up());
  plant(json{{"format", 2},
             {"description", "link s0 down"},
             {"netns", ns_->name()},
             {"devices", json::array({"s0"})},
             {"steps", {{{"op", "set-link-up"}, {"dev", "s0"}}}}}
            .dump());
  const std::string output = sweep();
  std::cout << output;
  EXPECT_NE(output.find("undid link s0 down (left by process 1)"), std::string::npos) << output;
  EXPECT_TRUE(link_up());
  EXPECT_FALSE(fs::exists(owner_)) << "a dead owner's state goes once undone";
}

}  // namespace
}  // namespace collide::testing
