// `collide run` on input that cannot run: a clear message naming the file, the line and the field,
// a usage exit code, and nothing started: no namespace, no results folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "common/process.h"
#include "tests/support/all_reduce_trace.h"
#include "traces/trace_io.h"

namespace collide {
namespace {

namespace fs = std::filesystem;

// Namespaces of the scenarios' testbed ("refuse-h0", "refuse-leaf0", ...): other testbeds may come
// and go on a shared machine while the test runs.
std::set<std::string> namespaces() {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/var/run/netns", ec)) {
    const std::string name = e.path().filename();
    if (name.rfind("refuse", 0) == 0) out.insert(name);
  }
  return out;
}

class RunRefusesBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collide-refuse-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `collide run` on `yaml` and returns its output; expects exit code 2 and no side effects.
  std::string refused(const std::string& yaml) {
    const fs::path path = dir_ / "scenario.yaml";
    std::ofstream(path) << yaml;
    auto run = process::run_command({COLLIDE_BIN, "run", path.string(), "--output", (dir_ / "out").string()});
    EXPECT_TRUE(run.ok());
    if (!run.ok()) return "";
    EXPECT_EQ(run->exit_code, 2) << run->output;
    EXPECT_TRUE(namespaces().empty()) << "a namespace was created";
    EXPECT_FALSE(fs::exists(dir_ / "out")) << "results were started";
    return run->output;
  }

  std::string path() const { return (dir_ / "scenario.yaml").string(); }
  fs::path dir_;
};

constexpr const char* kTestbed = "testbed:\n  virtual: {name: refuse, hosts: 4, leaves: 2, spines: 2}\n"
                                 "  ranks_per_host: 2\nruns: {baseline: true}\n";

TEST_F(RunRefusesBadInputTest, YamlSyntaxError) {
  const std::string out = refused(std::string("name: x\nworkload: {collectives: [oops\n") + kTestbed);
  EXPECT_NE(out.find(path() + ":"), std::string::npos) << out;
}

TEST_F(RunRefusesBadInputTest, UnknownField) {
  const std::string out = refused(std::string("name: x\nworkload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\n"
                                              "  iteratons: 3\n") + kTestbed);
  EXPECT_NE(out.find(path() + ":4"), std::string::npos) << out;
  EXPECT_NE(out.find("iteratons"), std::string::npos) << out;
}

TEST_F(RunRefusesBadInputTest, SynthesizedJobOfTheWrongSize) {
  const std::string out = refused(std::string("name: x\nworkload:\n  synth: {model: llama3-70b, tp: 2, pp: 2, dp: 4, "
                                              "layers: 4}\n") + kTestbed);
  EXPECT_NE(out.find(path() + ":3: workload.synth: the job has tp 2 x pp 2 x dp 4 = 16 ranks"), std::string::npos)
      << out;
}

TEST_F(RunRefusesBadInputTest, DamagedTrace) {
  const fs::path trace = dir_ / "job.trace";
  testing::write_all_reduce_trace(trace.string(), 8, 1 << 20);
  fs::resize_file(trace, fs::file_size(trace) - 3);
  const std::string out = refused("name: x\nworkload:\n  trace: " + trace.string() + "\n" + kTestbed);
  EXPECT_NE(out.find(path() + ":3: workload.trace: "), std::string::npos) << out;
  EXPECT_NE(out.find(trace.string()), std::string::npos) << out;
}

TEST_F(RunRefusesBadInputTest, NotATraceAtAll) {
  std::ofstream(dir_ / "junk.trace") << "this is not a trace\n";
  const std::string out = refused("name: x\nworkload:\n  trace: " + (dir_ / "junk.trace").string() + "\n" + kTestbed);
  EXPECT_NE(out.find(path() + ":3: workload.trace: "), std::string::npos) << out;
}

// Planning every repetition up front used to take gigabytes before anything ran.
TEST_F(RunRefusesBadInputTest, ABillionRepetitions) {
  const std::string out = refused("name: x\nworkload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\n"
                                  "testbed:\n  virtual: {name: refuse, hosts: 4, leaves: 2, spines: 2}\n"
                                  "runs:\n  baseline: true\n  repetitions: 1e9\n");
  EXPECT_NE(out.find(path() + ":8: runs.repetitions: "), std::string::npos) << out;
}

// The checks of `collide trace validate` run on the scenario's trace before anything is built.
TEST_F(RunRefusesBadInputTest, AnOpOnAnUndeclaredCommunicator) {
  const fs::path trace = dir_ / "job.trace";
  v1::TraceHeader header;
  header.set_world_size(8);
  auto* comm = header.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < 8; ++r) comm->add_ranks(r);
  auto writer = traces::TraceWriter::create(trace.string(), header);
  ASSERT_TRUE(writer.ok());
  for (uint32_t r = 0; r < 8; ++r) {
    v1::Op op;
    op.set_rank(r);
    op.set_kind(v1::OP_KIND_ALL_REDUCE);
    op.set_comm(r == 5 ? "nowhere" : "world");
    op.set_bytes(4096);
    op.set_count(2048);
    ASSERT_TRUE((*writer)->write(op).ok());
  }
  ASSERT_TRUE((*writer)->close().ok());
  const std::string out = refused("name: x\nworkload:\n  trace: " + trace.string() + "\n" + kTestbed);
  EXPECT_NE(out.find(path() + ":3: workload.trace: "), std::string::npos) << out;
  EXPECT_NE(out.find("nowhere"), std::string::npos) << out;
}

// --output naming a file: a usage error, not an uncaught filesystem_error.
TEST_F(RunRefusesBadInputTest, AnOutputThatIsAFile) {
  const fs::path path = dir_ / "scenario.yaml";
  std::ofstream(path) << "name: x\nworkload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\n" << kTestbed;
  std::ofstream(dir_ / "taken") << "a file\n";
  auto run = process::run_command({COLLIDE_BIN, "run", path.string(), "--output", (dir_ / "taken").string()});
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->exit_code, 2) << run->output;
  EXPECT_NE(run->output.find("taken"), std::string::npos) << run->output;
  EXPECT_TRUE(namespaces().empty()) << "a namespace was created";
}

}  // namespace
}  // namespace collide
