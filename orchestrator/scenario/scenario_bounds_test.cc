// Scenarios that name sizes and counts nothing could run, settings the replays would refuse, and
// values that would silently mean something else: refused at load, with the file, the line and
// the field.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "orchestrator/scenario/scenario.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

namespace fs = std::filesystem;

// Lines 1-6 of every scenario below; what a test adds starts on line 7.
constexpr const char* kHead = R"(name: bounds
testbed:
  virtual: {name: bnd, hosts: 2, leaves: 1}
  ranks_per_host: 2
workload:
  collectives: {kind: all-reduce, bytes: 1MiB}
)";

class ScenarioBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collide-bounds-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    path_ = (dir_ / "scenario.yaml").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Loads `text`; expects it refused with "<file>:<line>: <field>: " and returns the message.
  std::string refused(const std::string& text, int line, const std::string& field) {
    std::ofstream(path_) << text;
    auto s = load_scenario(path_);
    EXPECT_FALSE(s.ok()) << "accepted:\n" << text;
    if (s.ok()) return "";
    const std::string where = path_ + ":" + std::to_string(line) + ": " + field + ": ";
    EXPECT_NE(s.status().message().find(where), std::string::npos)
        << "wanted '" << where << "' in: " << s.status().message();
    return s.status().message();
  }
  bool loads(const std::string& text) {
    std::ofstream(path_) << text;
    auto s = load_scenario(path_);
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok();
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(ScenarioBoundsTest, TheHeadAloneLoads) { EXPECT_TRUE(loads(std::string(kHead) + "runs: {baseline: true}\n")); }

TEST_F(ScenarioBoundsTest, RefusesABillionRepetitions) {
  refused(std::string(kHead) + "runs:\n  baseline: true\n  repetitions: 1e9\n", 9, "runs.repetitions");
}

TEST_F(ScenarioBoundsTest, RefusesRunsThatWouldKeepMoreRecordsThanMemoryHolds) {
  // 4 ranks x 100000 iterations x 20 ops = 8M ops a run: over what one run may replay.
  const std::string text = R"(name: bounds
testbed:
  virtual: {name: bnd, hosts: 2, leaves: 1}
  ranks_per_host: 2
workload:
  collectives: {kind: all-reduce, bytes: 1MiB, count: 20}
  iterations: 100000
runs: {baseline: true}
)";
  refused(text, 6, "workload.collectives");
}

TEST_F(ScenarioBoundsTest, RefusesACollectiveOfAPetabyte) {
  refused(R"(name: bounds
testbed:
  virtual: {name: bnd, hosts: 2, leaves: 1}
workload:
  collectives:
    kind: all-reduce
    bytes: 1024TiB
runs: {baseline: true}
)",
          7, "workload.collectives.bytes");
}

TEST_F(ScenarioBoundsTest, RefusesAnMtuTheTransportCannotCarry) {
  refused(std::string(kHead) + "transport:\n  mtu_bytes: 100000\nruns: {baseline: true}\n", 8,
          "transport.mtu_bytes");
}

TEST_F(ScenarioBoundsTest, RefusesATimeoutExponentOf40) {
  refused(std::string(kHead) + "transport:\n  timeout_exponent: 40\nruns: {baseline: true}\n", 8,
          "transport.timeout_exponent");
}

TEST_F(ScenarioBoundsTest, RefusesAHundredThousandChannels) {
  refused(std::string(kHead) + "transport:\n  channels: 100000\nruns: {baseline: true}\n", 8, "transport.channels");
}

TEST_F(ScenarioBoundsTest, RefusesAVariantsHundredThousandQps) {
  refused(std::string(kHead) + "runs:\n  variants:\n    - name: many\n      transport:\n"
                               "        qps_per_connection: 100000\n",
          11, "runs.variants[0].transport.qps_per_connection");
}

TEST_F(ScenarioBoundsTest, RefusesEnginesPerNicOnAVirtualTestbed) {
  const std::string why = refused("name: bounds\ntestbed:\n  virtual: {hosts: 2}\n  queues_per_nic: 2\n"
                                  "workload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\n",
                                  4, "testbed.queues_per_nic");
  EXPECT_NE(why.find("real hosts"), std::string::npos) << why;
}

TEST_F(ScenarioBoundsTest, RefusesQueuesPerNicTheSourcePortCannotSteer) {
  const std::string agents = "name: bounds\ntestbed:\n  agents:\n    - {address: 'h0:7000', host: 0}\n"
                             "    - {address: 'h1:7000', host: 1}\n  queues_per_nic: ";
  const std::string rest = "\nworkload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\nruns: {baseline: true}\n";
  for (const char* q : {"3", "32"}) {
    const std::string why = refused(agents + q + rest, 6, "testbed.queues_per_nic");
    EXPECT_NE(why.find("a power of two up to 16"), std::string::npos) << why;
  }
  EXPECT_TRUE(loads(agents + "4" + rest));
}

TEST_F(ScenarioBoundsTest, RefusesNoHosts) {
  refused("name: bounds\ntestbed:\n  virtual:\n    hosts: 0\nworkload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\n"
          "runs: {baseline: true}\n",
          4, "testbed.virtual.hosts");
}

TEST_F(ScenarioBoundsTest, RefusesNoLeaves) {
  refused("name: bounds\ntestbed:\n  virtual:\n    leaves: 0\nworkload:\n  collectives: {kind: all-reduce, bytes: 1MiB}\n"
          "runs: {baseline: true}\n",
          4, "testbed.virtual.leaves");
}

TEST_F(ScenarioBoundsTest, RefusesIterationsWithATrace) {
  const fs::path trace = dir_ / "job.trace";
  v1::TraceHeader header;
  header.set_world_size(4);
  auto writer = traces::TraceWriter::create(trace.string(), header);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->close().ok());
  refused("name: bounds\ntestbed:\n  virtual: {name: bnd, hosts: 2, leaves: 1}\nworkload:\n  trace: " +
              trace.string() + "\n  iterations: 4e9\nruns: {baseline: true}\n",
          6, "workload.iterations");
}

TEST_F(ScenarioBoundsTest, RefusesFourBillionIterationsOfACollective) {
  refused(std::string(kHead) + "  iterations: 4e9\nruns: {baseline: true}\n", 7, "workload.iterations");
}

TEST_F(ScenarioBoundsTest, RefusesAnOutputsDirectoryThatIsAFile) {
  std::ofstream(dir_ / "taken") << "a file\n";
  refused(std::string(kHead) + "outputs:\n  directory: " + (dir_ / "taken").string() + "\nruns: {baseline: true}\n",
          8, "outputs.directory");
}

TEST_F(ScenarioBoundsTest, RefusesANameThatLeavesTheResultsFolder) {
  std::string text = kHead;
  text.replace(0, std::string("name: bounds").size(), "name: ../../escape");
  refused(text + "runs: {baseline: true}\n", 1, "name");
}

TEST_F(ScenarioBoundsTest, RefusesATraceOfFourBillionRanks) {
  const fs::path trace = dir_ / "job.trace";
  v1::TraceHeader header;
  header.set_world_size(4'000'000'000u);
  auto writer = traces::TraceWriter::create(trace.string(), header);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->close().ok());
  const std::string out = refused("name: bounds\ntestbed:\n  virtual: {name: bnd, hosts: 2, leaves: 1}\n"
                                  "workload:\n  trace: " + trace.string() + "\nruns: {baseline: true}\n",
                                  5, "workload.trace");
  EXPECT_NE(out.find("world_size: 4000000000 is above"), std::string::npos) << out;
}

}  // namespace
}  // namespace collide::orchestrator
