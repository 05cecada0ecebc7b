#include "orchestrator/agent/host_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "orchestrator/testbed/pfc_settings.h"
#include "tests/support/all_reduce_trace.h"

namespace collide::orchestrator::agent {
namespace {

v1::PrepareRun run_of_nics(size_t nics) {
  v1::PrepareRun r;
  for (size_t n = 0; n < nics; ++n) r.add_nics()->set_port("afpacket:eth" + std::to_string(n));
  return r;
}

// The host's engine cores go to its NICs in rail order; a run that pins a NIC itself keeps it.
TEST(HostRunNicsTest, TheAgentsEngineCoresPinItsNicsInRailOrder) {
  HostRunDefaults defaults;
  defaults.engine_cores = {6, 7, 2};
  v1::PrepareRun run = run_of_nics(2);
  run.mutable_nics(1)->set_core(9);
  auto nics = nics_of_run(run, defaults);
  ASSERT_TRUE(nics.ok()) << nics.status().to_string();
  ASSERT_EQ(nics->size(), 2u);
  EXPECT_EQ((*nics)[0].core(), 6u);
  EXPECT_EQ((*nics)[1].core(), 9u);
  EXPECT_EQ((*nics)[1].port(), "afpacket:eth1");

  defaults.engine_cores.clear();
  nics = nics_of_run(run_of_nics(2), defaults);
  ASSERT_TRUE(nics.ok());
  for (const v1::RunNic& nic : *nics) EXPECT_FALSE(nic.has_core());
}

TEST(HostRunNicsTest, FewerEngineCoresThanNicsIsAnError) {
  HostRunDefaults defaults;
  defaults.engine_cores = {6};
  auto nics = nics_of_run(run_of_nics(4), defaults);
  ASSERT_FALSE(nics.ok());
  EXPECT_EQ(nics.status().message(),
            "the agent's --engine-cores names 1 cores for the run's 4 engines (4 NICs x 1 queues)");
}

// With engines per queue, the agent's cores go NIC by NIC, each NIC's queues in turn.
TEST(HostRunNicsTest, WithSeveralQueuesPerNicEachQueuesEngineGetsTheNextCore) {
  HostRunDefaults defaults;
  defaults.engine_cores = {2, 3, 4, 5};
  v1::PrepareRun run = run_of_nics(2);
  run.set_queues_per_nic(2);
  auto nics = nics_of_run(run, defaults);
  ASSERT_TRUE(nics.ok()) << nics.status().to_string();
  EXPECT_EQ((*nics)[0].core(), 2u);
  ASSERT_EQ((*nics)[0].queue_cores_size(), 1);
  EXPECT_EQ((*nics)[0].queue_cores(0), 3u);
  EXPECT_EQ((*nics)[1].core(), 4u);
  EXPECT_EQ((*nics)[1].queue_cores(0), 5u);

  defaults.engine_cores = {2, 3, 4};
  nics = nics_of_run(run, defaults);
  ASSERT_FALSE(nics.ok());
  EXPECT_EQ(nics.status().message(),
            "the agent's --engine-cores names 3 cores for the run's 4 engines (2 NICs x 2 queues)");
}

TEST(HostRunNicsTest, ARunNamingNoNicUsesTheAgentsPort) {
  HostRunDefaults defaults;
  defaults.port_spec = "dpdk:0000:3b:00.0";
  defaults.engine_cores = {3};
  auto nics = nics_of_run(v1::PrepareRun(), defaults);
  ASSERT_TRUE(nics.ok());
  ASSERT_EQ(nics->size(), 1u);
  EXPECT_EQ((*nics)[0].port(), "dpdk:0000:3b:00.0");
  EXPECT_EQ((*nics)[0].core(), 3u);
}

TEST(HostRunNicsTest, ANicWithoutAPortAnywhereIsAnError) {
  auto nics = nics_of_run(v1::PrepareRun(), HostRunDefaults());
  ASSERT_FALSE(nics.ok());
  EXPECT_EQ(nics.status().message(), "the run names no packet port and the agent has none (--port-spec)");
}

// Rank 0 of a run on a virtual testbed of 2 hosts, and the request its host's replay gets.
v1::PrepareRun testbed_run() {
  v1::PrepareRun run;
  run.add_ranks(0);
  run.set_ranks_per_host(1);
  run.mutable_testbed()->set_hosts(2);
  return run;
}

v1::ReplayRequest request_of(const v1::PrepareRun& run) {
  std::vector<std::string> pauses, delays;
  const std::vector<v1::RunNic> nics(1);
  return replay_request(run, {}, "job.trace", nics, {}, pauses, delays);
}

// A lossless virtual testbed: the request each host's replay gets carries the NICs' lossless
// settings (resolve_pfc's host defaults); without pfc.lossless it carries none.
TEST(HostRunTest, ALosslessTestbedAsksTheReplayForLosslessReceive) {
  v1::PrepareRun run = testbed_run();
  EXPECT_FALSE(request_of(run).has_lossless());

  run.mutable_testbed()->mutable_pfc()->set_lossless(true);
  run.mutable_testbed()->mutable_pfc()->set_host_xoff_frames(200);
  const v1::ReplayRequest q = request_of(run);
  ASSERT_TRUE(q.has_lossless());
  EXPECT_EQ(q.lossless().xoff_frames(), 200u);
  EXPECT_EQ(q.lossless().xon_frames(), 50u);
  EXPECT_EQ(q.lossless().priority(), testbed::kDefaultPfcPriority);
  EXPECT_EQ(q.lossless().quanta(), testbed::kDefaultPauseQuanta);
}

// A shaped virtual testbed: each NIC sends at its host link's rate (the engine paces its port,
// DCQCN starts there) and keeps the NIC buffer the testbed gives it; unshaped, nothing is paced.
TEST(HostRunTest, AShapedTestbedPacesEachNicAtItsLinksRate) {
  v1::PrepareRun run = testbed_run();
  const v1::ReplayRequest unshaped = request_of(run);
  EXPECT_EQ(unshaped.pace_gbps(), 0.0);
  EXPECT_EQ(unshaped.dcqcn_line_rate_gbps(), 0.0);
  EXPECT_EQ(unshaped.drain_buffer_frames(), 0u);

  run.mutable_testbed()->set_host_link_gbps(0.25);
  run.mutable_testbed()->set_host_rx_buffer_frames(96);
  const v1::ReplayRequest q = request_of(run);
  EXPECT_EQ(q.pace_gbps(), 0.25);
  EXPECT_EQ(q.dcqcn_line_rate_gbps(), 0.25);
  EXPECT_EQ(q.drain_buffer_frames(), 96u);
}

#ifdef COLLIDE_HAVE_DPDK
// The EAL arguments an agent is configured with (`collide agent --eal-arg`) reach the EAL of every
// replay it starts: one the EAL does not know makes the run fail to start, and says so.
TEST(HostRunTest, TheAgentsEalArgsReachTheReplaysEal) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("collide-host-run-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace_file = (dir / "job.trace").string();
  testing::write_all_reduce_trace(trace_file, 2, 4096, /*declare_comm=*/true);
  std::ifstream in(trace_file, std::ios::binary);
  v1::PrepareRun request;
  request.set_trace(std::string(std::istreambuf_iterator<char>(in), {}));
  request.add_ranks(0);
  request.set_ranks_per_host(1);
  request.add_nics()->set_next_hop_mac("02:00:00:00:00:01");

  HostRunDefaults defaults;
  defaults.port_spec = "dpdk:net_null0";
  defaults.work_dir = dir / "work";
  defaults.collide_binary = COLLIDE_BIN;
  defaults.eal_args = {"--no-such-eal-option"};
  auto run = HostRun::prepare(request, defaults);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(run.ok()) << "a replay whose EAL was given an unknown option started";
  const std::string why = run.status().message();
  EXPECT_NE(why.find("rte_eal_init"), std::string::npos) << why;
  EXPECT_NE(why.find("--no-such-eal-option"), std::string::npos) << why;
}
#endif

}  // namespace
}  // namespace collide::orchestrator::agent
