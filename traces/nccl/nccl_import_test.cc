#include "traces/nccl/nccl_import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "tests/support/status_matchers.h"
#include "traces/nccl/nccl_test_util.h"
#include "traces/op_types.h"

namespace collide::traces::nccl {
namespace {

using testing::comm_by_id;
using testing::import_files;
using testing::Imported;
using testing::ops_of;
using testing::ranks_of;
using testing::scratch_dir;
using testing::testdata;
using testing::write_file;

Imported load(const std::string& fixture) {
  auto t = import_files({testdata(fixture)});
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(*t) : Imported{};
}

void expect_indices_in_order(const Imported& t) {
  for (uint32_t r = 0; r < t.header.world_size(); ++r) {
    const auto ops = ops_of(t, r);
    for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(ops[i].index(), i) << "rank " << r;
  }
}

TEST(NcclImport, Version2_4) {
  const Imported t = load("nccl_2_4.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  EXPECT_EQ(t.header.source_format(), v1::SOURCE_FORMAT_NCCL_LOG);
  EXPECT_EQ(t.header.nccl_version(), "2.4.8+cuda10.1");
  EXPECT_EQ(t.header.world_size(), 2u);
  ASSERT_EQ(t.header.communicators_size(), 1);
  EXPECT_EQ(ranks_of(t.header.communicators(0)), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(t.header.communicators(0).name(), "world");
  ASSERT_EQ(t.ops.size(), 6u);
  // Both processes print the same comm pointer; each op still finds its own rank.
  EXPECT_EQ(t.ops[0].rank(), 0u);
  EXPECT_EQ(t.ops[1].rank(), 1u);
  EXPECT_EQ(t.ops[0].kind(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(t.ops[0].datatype(), v1::DATA_TYPE_FLOAT32);
  EXPECT_EQ(t.ops[0].bytes(), 4096u);
  EXPECT_EQ(t.ops[0].reduce_op(), v1::REDUCE_OP_SUM);
  EXPECT_EQ(t.ops[0].root(), -1);
  EXPECT_EQ(op_source(t.header, t.ops[0]), testdata("nccl_2_4.log") + ":5");
  EXPECT_EQ(t.ops[2].kind(), v1::OP_KIND_BROADCAST);
  EXPECT_EQ(t.ops[2].root(), 1);
  EXPECT_EQ(t.ops[2].reduce_op(), v1::REDUCE_OP_UNSPECIFIED);
  EXPECT_EQ(t.ops[5].kind(), v1::OP_KIND_REDUCE);
  EXPECT_EQ(t.ops[5].reduce_op(), v1::REDUCE_OP_MAX);
  EXPECT_EQ(t.ops[5].bytes(), 16u * 8);
  EXPECT_EQ(t.ops[5].op_count(), 2u);
  EXPECT_FALSE(t.ops[0].has_enqueue_time_ns());
  ASSERT_EQ(t.header.ranks_size(), 2);
  EXPECT_EQ(t.header.ranks(1).host(), "node-a");
  EXPECT_EQ(t.header.ranks(1).pid(), 2002u);
  EXPECT_EQ(t.header.ranks(1).device(), 1);
  EXPECT_EQ(t.header.ranks(0).nics_size(), 1);
  EXPECT_EQ(t.header.ranks(0).nics(0), "eth0");
  expect_indices_in_order(t);
}

TEST(NcclImport, OldSendConventionAndLauncherPrefix) {
  const Imported t = load("nccl_2_7_send.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  EXPECT_EQ(t.header.nccl_version(), "2.7.8+cuda11.0");
  ASSERT_EQ(t.ops.size(), 6u);
  const auto r0 = ops_of(t, 0);
  ASSERT_EQ(r0.size(), 3u);
  EXPECT_EQ(r0[0].kind(), v1::OP_KIND_SEND);
  EXPECT_EQ(r0[0].root(), 1);  // the peer
  EXPECT_EQ(r0[0].bytes(), 262144u * 4);
  EXPECT_EQ(r0[1].kind(), v1::OP_KIND_RECV);
  // The send and receive of one group call share an opCount, hence a group.
  EXPECT_NE(r0[0].group(), 0u);
  EXPECT_EQ(r0[0].group(), r0[1].group());
  EXPECT_EQ(r0[2].kind(), v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(r0[2].count(), 1000u);  // NCCL's meaning: what each rank sends
  EXPECT_EQ(r0[2].bytes(), 2000u);
  EXPECT_EQ(r0[2].group(), 0u);
  EXPECT_EQ(t.header.ranks(0).node(), 0u);
  EXPECT_EQ(t.header.ranks(1).node(), 1u);
  EXPECT_EQ(t.header.ranks(1).nics_size(), 2);
  EXPECT_EQ(t.header.ranks(1).nics(1), "mlx5_3:1");
  expect_indices_in_order(t);
}

TEST(NcclImport, NewSendConvention) {
  const Imported t = load("nccl_2_12_send.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  ASSERT_EQ(t.ops.size(), 6u);
  const auto r1 = ops_of(t, 1);
  ASSERT_EQ(r1.size(), 3u);
  EXPECT_EQ(r1[0].kind(), v1::OP_KIND_SEND);
  EXPECT_EQ(r1[0].root(), 0);
  EXPECT_EQ(r1[0].datatype(), v1::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(r1[2].kind(), v1::OP_KIND_RECV);
  EXPECT_EQ(r1[2].op_count(), 1u);
  EXPECT_NE(r1[2].group(), r1[0].group());
}

TEST(NcclImport, Version2_18CommIdsGraphAndNics) {
  const Imported t = load("nccl_2_18.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  EXPECT_EQ(t.header.nccl_version(), "2.18.3+cuda12.2");
  EXPECT_EQ(t.header.world_size(), 4u);
  ASSERT_EQ(t.header.communicators_size(), 5);  // world, 2 TP, 2 DP
  const v1::Communicator& world = t.header.communicators(0);
  EXPECT_EQ(ranks_of(world), (std::vector<uint32_t>{0, 1, 2, 3}));
  ASSERT_EQ(world.rings_size(), 2);
  EXPECT_EQ(world.rings(1).channel(), 1u);
  EXPECT_EQ(std::vector<uint32_t>(world.rings(0).ranks().begin(), world.rings(0).ranks().end()),
            (std::vector<uint32_t>{0, 1, 2, 3}));
  ASSERT_EQ(world.trees_size(), 2);
  ASSERT_EQ(world.trees(0).nodes_size(), 4);
  EXPECT_EQ(world.trees(0).nodes(0).parent(), -1);
  EXPECT_EQ(world.trees(0).nodes(2).parent(), 1);
  ASSERT_EQ(world.trees(0).nodes(2).children_size(), 1);
  EXPECT_EQ(world.trees(0).nodes(2).children(0), 3u);
  EXPECT_EQ(ranks_of(t.header.communicators(1)), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(ranks_of(t.header.communicators(2)), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(ranks_of(t.header.communicators(3)), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(ranks_of(t.header.communicators(4)), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(t.header.communicators(1).rings_size(), 0);
  ASSERT_EQ(t.ops.size(), 36u);
  for (const v1::Op& op : t.ops) {
    const v1::Communicator* comm = comm_by_id(t, op.comm());
    ASSERT_NE(comm, nullptr);
    EXPECT_NE(std::find(comm->ranks().begin(), comm->ranks().end(), op.rank()),
              comm->ranks().end());
    if (op.kind() == v1::OP_KIND_REDUCE_SCATTER) {
      EXPECT_EQ(op.reduce_op(), v1::REDUCE_OP_AVG);
    }
  }
  EXPECT_EQ(t.header.ranks(3).host(), "node-b");
  EXPECT_EQ(t.header.ranks(3).node(), 1u);
  EXPECT_EQ(t.header.ranks(3).device(), 1);
  ASSERT_EQ(t.header.ranks(3).nics_size(), 1);
  EXPECT_EQ(t.header.ranks(3).nics(0), "mlx5_1:1");
  expect_indices_in_order(t);
}

TEST(NcclImport, Version2_21ApiNamesAndSplit) {
  const Imported t = load("nccl_2_21.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  EXPECT_EQ(t.header.nccl_version(), "2.21.5+cuda12.4");
  ASSERT_EQ(t.header.communicators_size(), 4);
  const v1::Communicator& world = t.header.communicators(0);
  EXPECT_EQ(ranks_of(world), (std::vector<uint32_t>{0, 1, 2, 3}));
  ASSERT_EQ(world.rings_size(), 1);
  ASSERT_EQ(world.trees_size(), 1);
  EXPECT_EQ(ranks_of(t.header.communicators(1)), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(t.header.communicators(1).name(), "split color 0");
  EXPECT_EQ(ranks_of(t.header.communicators(2)), (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(ranks_of(t.header.communicators(3)), (std::vector<uint32_t>{3, 2, 1, 0}));
  ASSERT_EQ(t.ops.size(), 12u);
  const auto r2 = ops_of(t, 2);
  ASSERT_EQ(r2.size(), 3u);
  EXPECT_EQ(r2[0].comm(), "c0");
  EXPECT_EQ(r2[1].comm(), "c1");
  EXPECT_EQ(r2[1].reduce_op(), v1::REDUCE_OP_PROD);
  EXPECT_EQ(r2[2].comm(), "c3");
  EXPECT_EQ(r2[2].root(), 3);  // comm rank 3 of the reversed comm: global rank 0
  EXPECT_EQ(r2[2].datatype(), v1::DATA_TYPE_INT32);
}

TEST(NcclImport, Version2_26Timestamps) {
  const Imported t = load("nccl_2_26.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  EXPECT_EQ(t.header.ranks(0).host(), "ray-w0");
  EXPECT_EQ(t.header.ranks(1).pid(), 616u);
  ASSERT_EQ(t.ops.size(), 7u);
  ASSERT_TRUE(t.ops[0].has_enqueue_time_ns());
  EXPECT_EQ(t.ops[0].enqueue_time_ns(), 1741610100123456000ull);  // 2025-03-10 12:35:00.123456
  EXPECT_EQ(t.ops[1].enqueue_time_ns(), 1741610100124456000ull);
  EXPECT_EQ(t.ops[6].enqueue_time_ns(), 1741610107000000500ull);  // the launcher's timestamp
  EXPECT_EQ(t.ops[6].datatype(), v1::DATA_TYPE_INT64);
  EXPECT_EQ(t.ops[4].count(), 4096u * 3);
}

TEST(NcclImport, Version2_28AllToAllGatherScatter) {
  const Imported t = load("nccl_2_28.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  ASSERT_EQ(t.ops.size(), 12u);
  const auto r3 = ops_of(t, 3);
  ASSERT_EQ(r3.size(), 3u);
  EXPECT_EQ(r3[0].kind(), v1::OP_KIND_ALL_TO_ALL);
  EXPECT_EQ(r3[0].count(), 1024u);
  EXPECT_EQ(r3[0].datatype(), v1::DATA_TYPE_FP8_E4M3);
  EXPECT_EQ(r3[0].bytes(), 1024u);
  EXPECT_EQ(r3[0].root(), -1);
  EXPECT_EQ(r3[1].kind(), v1::OP_KIND_GATHER);
  EXPECT_EQ(r3[1].root(), 2);
  EXPECT_EQ(r3[1].datatype(), v1::DATA_TYPE_FP8_E5M2);
  EXPECT_EQ(r3[2].kind(), v1::OP_KIND_SCATTER);
  EXPECT_EQ(r3[2].root(), 1);
  EXPECT_EQ(r3[2].bytes(), 32u * 4);
}

TEST(NcclImport, Version2_29RankPrefixAndCutRing) {
  const Imported t = load("nccl_2_29.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  ASSERT_EQ(t.header.communicators_size(), 1);
  const v1::Communicator& world = t.header.communicators(0);
  // The printed ring stops at "0 2 ..."; the Ring neighbour lines give the whole of it.
  ASSERT_EQ(world.rings_size(), 1);
  EXPECT_EQ(std::vector<uint32_t>(world.rings(0).ranks().begin(), world.rings(0).ranks().end()),
            (std::vector<uint32_t>{0, 2, 1, 3}));
  ASSERT_EQ(t.ops.size(), 4u);
  EXPECT_EQ(t.ops[0].kind(), v1::OP_KIND_REDUCE_SCATTER);
}

TEST(NcclImport, Rccl) {
  const Imported t = load("rccl.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  EXPECT_EQ(t.header.nccl_version(), "2.20.5+hip6.2");
  ASSERT_EQ(t.ops.size(), 2u);
  EXPECT_EQ(t.ops[1].bytes(), 33554432u * 2);
  EXPECT_EQ(t.ops[1].datatype(), v1::DATA_TYPE_FLOAT16);
}

TEST(NcclImport, RcclExtraFieldsAndKernelTraceLines) {
  // `acc (nil)`, `task`/`globalrank` and `##` kernel-trace lines: every op kept, no problem.
  const Imported t = load("rccl_acc.log");
  EXPECT_EQ(t.report.problems_total, 0u) << t.report.problems[0].what;
  ASSERT_EQ(t.ops.size(), 6u);
  const auto r1 = ops_of(t, 1);
  ASSERT_EQ(r1.size(), 3u);
  EXPECT_EQ(r1[2].count(), 8192u);
  EXPECT_EQ(r1[2].op_count(), 2u);
}

TEST(NcclImport, TuningChoicesGoToTheHeaderAndUnreadLinesAreCountedByKind) {
  for (bool streamed : {false, true}) {
    SCOPED_TRACE(streamed ? "streamed" : "stored");
    const std::string log = testdata("tuning_and_unread.log");
    const std::string out = (scratch_dir() / "out.trace").string();
    auto report = streamed ? import_nccl_logs_streamed({log}, out, {})
                           : import_nccl_logs({log}, out, {});
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    EXPECT_EQ(report->problems_total, 0u);
    EXPECT_EQ(report->ops, 8u);
    auto reader = TraceReader::open(out);
    ASSERT_TRUE(reader.ok());
    EXPECT_EQ((*reader)->header().metadata().at("nccl.tuning"),
              "all_reduce TREE/LL 8-65536 B; all_reduce RING/SIMPLE 16777216 B; "
              "all_gather RING/SIMPLE 8388608 B");
    std::vector<std::pair<std::string, uint64_t>> kinds;
    for (const UnreadLines& u : report->unread) kinds.emplace_back(u.kind, u.lines);
    EXPECT_EQ(kinds, (std::vector<std::pair<std::string, uint64_t>>{
                         {"NCCL INFO Bootstrap", 2},
                         {"NCCL INFO cudaDriverVersion", 2},
                         {"NCCL INFO Channel", 2},
                         {"NCCL INFO N coll", 1},
                         {"lines without an NCCL message", 2},
                         {"NCCL WARN", 1},
                     }));
    ASSERT_FALSE(report->unread.empty());
    EXPECT_EQ(report->unread[4].first_where, log + ":13");
    EXPECT_EQ(report->unread[4].example, "step 0: loss 10.82");
  }
}

TEST(NcclImport, CollOnlyLogOfTwoProcesses) {
  // No init line: each process prints its own comm pointer; TUNING lines are no problem.
  const Imported t = load("coll_only_two_hosts.log");
  EXPECT_EQ(t.report.problems_total, 0u) << t.report.problems[0].where << " "
                                         << t.report.problems[0].what;
  EXPECT_EQ(t.header.world_size(), 2u);
  EXPECT_EQ(t.report.ranks, 2u);
  ASSERT_EQ(t.ops.size(), 10u);
  ASSERT_EQ(t.header.communicators_size(), 1);
  EXPECT_EQ(t.header.communicators(0).name(), "world");
  EXPECT_EQ(ranks_of(t.header.communicators(0)), (std::vector<uint32_t>{0, 1}));
  // Ranks in host order: trn-b07 is rank 0 though trn-b08 printed the first all-gather.
  EXPECT_EQ(t.header.ranks(0).host(), "trn-b07");
  EXPECT_EQ(t.header.ranks(1).host(), "trn-b08");
  for (uint32_t r = 0; r < 2; ++r) {
    const auto ops = ops_of(t, r);
    ASSERT_EQ(ops.size(), 5u);
    EXPECT_EQ(ops[0].count(), 25165824u);
    EXPECT_EQ(ops[3].datatype(), v1::DATA_TYPE_BFLOAT16);
    EXPECT_EQ(ops[4].kind(), v1::OP_KIND_ALL_GATHER);
    EXPECT_EQ(ops[4].op_count(), 4u);
  }
  expect_indices_in_order(t);
  // Said once, in the trace and to the user.
  EXPECT_EQ(t.header.metadata().count("nccl.inferred"), 1u);
  ASSERT_EQ(t.report.notes.size(), 1u);
  EXPECT_NE(t.report.notes[0].find("INIT"), std::string::npos);
  // Strict mode imports it too: inferring is no problem.
  auto strict = import_files({testdata("coll_only_two_hosts.log")}, true);
  ASSERT_TRUE(strict.ok()) << strict.status().to_string();
  EXPECT_EQ(strict->ops.size(), 10u);
}

// COLL lines of an old version: no init line and no `[nranks=N]`, two processes of some job.
std::string coll_lines_without_nranks() {
  std::string text;
  for (uint64_t op = 0; op < 3; ++op) {
    for (int dev = 0; dev < 2; ++dev) {
      text += fmt::format(
          "old-{}:7{}:7{} [0] NCCL INFO AllReduce: opCount {} sendbuff 0x7f00 recvbuff 0x7f80 "
          "count 1024 datatype 7 op 0 root 0 comm 0x5{}00 stream 0x1\n",
          dev, dev, dev, op, dev);
    }
  }
  return text;
}

TEST(NcclImport, WorldSizeOptionServesLogsThatPrintNoNranks) {
  const std::string log = write_file("old.log", coll_lines_without_nranks());
  ImportOptions options;
  auto seen = import_files({log}, options);
  ASSERT_TRUE(seen.ok()) << seen.status().to_string();
  EXPECT_EQ(seen->header.world_size(), 2u);
  options.world_size = 8;
  auto t = import_files({log}, options);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->header.world_size(), 8u);
  EXPECT_EQ(t->ops.size(), 6u);
  EXPECT_EQ(t->header.metadata().at("nccl.unobserved_ranks"), "2-7");
  ASSERT_EQ(t->header.metadata().count("nccl.world_size"), 1u);
  EXPECT_NE(t->header.metadata().at("nccl.world_size").find("--world-size"), std::string::npos);
  bool said = false;
  for (const std::string& note : t->report.notes) said = said || note.find("--world-size") != std::string::npos;
  EXPECT_TRUE(said);
  // Fewer ranks than the logs show is refused.
  options.world_size = 1;
  auto small = import_files({log}, options);
  ASSERT_THAT(small, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(small.status().message().find("smaller than the 2 ranks"), std::string::npos);
}

TEST(NcclImport, WorldSizeOptionThatDisagreesWithNranksIsRefused) {
  ImportOptions options;
  options.world_size = 4;  // what NCCL printed: accepted, nothing said
  auto same = import_files({testdata("nccl_2_18.log")}, options);
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_EQ(same->header.world_size(), 4u);
  EXPECT_EQ(same->header.metadata().count("nccl.world_size"), 0u);
  for (uint32_t wrong : {3u, 8u}) {
    options.world_size = wrong;
    for (const std::string& log : {testdata("nccl_2_18.log"), testdata("coll_only_two_hosts.log")}) {
      SCOPED_TRACE(log);
      auto t = import_files({log}, options);
      ASSERT_THAT(t, StatusIs(StatusCode::kInvalidArgument));
      EXPECT_NE(t.status().message().find(fmt::format("--world-size {} disagrees", wrong)),
                std::string::npos)
          << t.status().message();
      EXPECT_NE(t.status().message().find(log), std::string::npos) << t.status().message();
    }
  }
}

TEST(NcclImport, CollOnlyLogWhoseOpCountsStayZero) {
  // From 2.27 a communicator within one node prints opCount 0 for every op.
  std::string text;
  for (uint64_t count : {64, 128, 256}) {
    for (int dev = 0; dev < 2; ++dev) {
      text += fmt::format(
          "dgx1:{}:{} [{}] NCCL INFO ReduceScatter: opCount 0 sendbuff 0x7f00 recvbuff 0x7f80 "
          "count {} datatype 9 op 0 root 0 comm 0x6{}00 [nranks=2] stream 0x1\n",
          40 + dev, 40 + dev, dev, count, dev);
    }
  }
  auto t = import_files({write_file("zero.log", text)});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->report.problems_total, 0u);
  EXPECT_EQ(t->header.world_size(), 2u);
  ASSERT_EQ(t->header.communicators_size(), 1);
  ASSERT_EQ(ops_of(*t, 1).size(), 3u);
  EXPECT_EQ(ops_of(*t, 1)[2].count(), 256u);
}

TEST(NcclImport, CollOnlyRanksFollowTheDevicesOfAHost) {
  // Process 900 drives device 1 and 901 device 0: device order, not pid order, is rank order.
  std::string text;
  for (const auto& [pid, dev] : {std::pair{900, 1}, std::pair{901, 0}}) {
    text += fmt::format(
        "gpu-a:{}:{} [{}] NCCL INFO Broadcast: opCount 0 sendbuff 0x1 recvbuff 0x1 count 9 "
        "datatype 0 op 0 root 0 comm 0x{}00 [nranks=2] stream 0x1\n",
        pid, pid, dev, pid);
  }
  auto t = import_files({write_file("devices.log", text)});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ASSERT_EQ(t->header.ranks_size(), 2);
  EXPECT_EQ(t->header.ranks(0).pid(), 901u);
  EXPECT_EQ(t->header.ranks(0).device(), 0);
  EXPECT_EQ(t->header.ranks(1).pid(), 900u);
  EXPECT_EQ(t->header.ranks(1).device(), 1);
}

TEST(NcclImport, CollOnlyLogOfOneProcessDrivingTwoDevicesSaysSo) {
  // One process, two threads, one per device, each with its pointer to one 2-rank communicator.
  std::string text;
  for (int op = 0; op < 2; ++op) {
    for (int dev = 0; dev < 2; ++dev) {
      text += fmt::format(
          "ws1:300:{} [{}] NCCL INFO AllReduce: opCount {} sendbuff 0x1 recvbuff 0x1 count {} "
          "datatype 7 op 0 root 0 comm 0x7{}0 [nranks=2] stream 0x1\n",
          310 + dev, dev, op, 64 << op, dev);
    }
  }
  auto t = import_files({write_file("one_process.log", text)});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  bool said = false;
  for (const std::string& note : t->report.notes) {
    said = said || note.find("several devices") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

TEST(NcclImport, CollOnlyLogOfOneNodeOfA128RankJob) {
  const Imported t = load("coll_only_one_node_of_128.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  EXPECT_EQ(t.header.world_size(), 128u);
  ASSERT_EQ(t.header.ranks_size(), 128);
  EXPECT_EQ(t.header.ranks(3).host(), "gpu-n00");
  EXPECT_EQ(t.header.ranks(3).pid(), 7104u);
  EXPECT_EQ(t.header.ranks(3).device(), 3);
  EXPECT_EQ(t.header.ranks(4).device(), -1);  // never seen
  EXPECT_EQ(t.header.metadata().at("nccl.unobserved_ranks"), "4-127");
  ASSERT_EQ(t.ops.size(), 24u);
  ASSERT_EQ(t.header.communicators_size(), 2);
  EXPECT_EQ(ranks_of(t.header.communicators(0)), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ranks_of(t.header.communicators(1)), (std::vector<uint32_t>{0, 1, 2, 3}));
  // What NCCL's nranks said, so that validation knows the communicators are incomplete.
  EXPECT_EQ(t.header.communicators(0).declared_size(), 128u);
  EXPECT_EQ(t.header.communicators(1).declared_size(), 8u);
  const auto r2 = ops_of(t, 2);
  ASSERT_EQ(r2.size(), 6u);
  EXPECT_EQ(r2[1].kind(), v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(r2[1].comm(), t.header.communicators(1).id());
}

TEST(NcclImport, UnobservedRanksFilledFromTheWorldsCollectives) {
  ImportOptions options;
  options.fill_unobserved_ranks = true;
  auto t = import_files({testdata("coll_only_one_node_of_128.log")}, options);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->header.world_size(), 128u);
  const v1::Communicator& world = t->header.communicators(0);
  EXPECT_EQ(world.name(), "world");
  ASSERT_EQ(world.ranks_size(), 128);
  EXPECT_EQ(world.ranks(127), 127u);
  EXPECT_EQ(world.declared_size(), 0u);  // complete now
  // 24 ops seen, and the 3 all-reduces of the world for each of the 124 ranks not seen.
  EXPECT_EQ(t->ops.size(), 24u + 124u * 3u);
  EXPECT_EQ(t->report.ops, t->ops.size());
  const auto r100 = ops_of(*t, 100);
  ASSERT_EQ(r100.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r100[i].kind(), v1::OP_KIND_ALL_REDUCE);
    EXPECT_EQ(r100[i].count(), 1000u * (i + 1));
    EXPECT_EQ(r100[i].index(), i);
    EXPECT_EQ(r100[i].comm(), world.id());
  }
  EXPECT_EQ(t->header.metadata().count("nccl.filled_ranks"), 1u);
  // Without the option the unobserved ranks have no ops.
  EXPECT_EQ(ops_of(load("coll_only_one_node_of_128.log"), 100).size(), 0u);
}

TEST(NcclImport, InitOnlyLogIsAnErrorThatSaysToAddColl) {
  for (const bool strict : {false, true}) {
    auto t = import_files({testdata("init_only.log")}, strict);
    ASSERT_THAT(t, StatusIs(StatusCode::kInvalidArgument));
    EXPECT_NE(t.status().message().find("init_only.log"), std::string::npos);
    EXPECT_NE(t.status().message().find("COLL"), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find("INIT"), std::string::npos) << t.status().message();
  }
  // Streamed (as logs of several GB are), nothing is left behind either.
  const std::string out = (scratch_dir() / "streamed.trace").string();
  auto streamed = import_nccl_logs_streamed({testdata("init_only.log")}, out, {});
  ASSERT_THAT(streamed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(streamed.status().message().find("COLL"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(NcclImport, LogsOfTwoJobsAreRefused) {
  // Each job's log on its own imports; together they are two worlds of 2, with or without init
  // lines (which print no commId here, as before 2.16).
  auto job = [](const std::string& name, const std::string& host, uint64_t count, bool init) {
    std::string text;
    for (int pid = 1; pid <= 2 && init; ++pid) {
      text += fmt::format(
          "{}:{}:{} [{}] NCCL INFO comm 0x{}a0 rank {} nranks 2 cudaDev {} busId 1000 - Init "
          "COMPLETE\n",
          host, pid, pid, pid - 1, pid, pid - 1, pid - 1);
    }
    for (int pid = 1; pid <= 2; ++pid) {
      for (int i = 0; i < 3; ++i) {
        text += fmt::format(
            "{}:{}:{} [{}] NCCL INFO AllReduce: opCount {:x} sendbuff 0x7f00 recvbuff 0x7f00 "
            "count {} datatype 7 op 0 root 0 comm 0x{}a0 [nranks=2] stream 0x1\n",
            host, pid, pid, pid - 1, i, count + i, pid);
      }
    }
    return write_file(name, text);
  };
  for (const bool init : {false, true}) {
    SCOPED_TRACE(init ? "with init lines" : "COLL only");
    const std::string a = job("job_a.log", "alpha", 100, init);
    const std::string b = job("job_b.log", "beta", 5000, init);
    ASSERT_TRUE(import_files({a}).ok());
    ASSERT_TRUE(import_files({b}).ok());
    auto both = import_files({a, b});
    ASSERT_THAT(both, StatusIs(StatusCode::kInvalidArgument));
    EXPECT_NE(both.status().message().find(a), std::string::npos) << both.status().message();
    EXPECT_NE(both.status().message().find(b), std::string::npos) << both.status().message();
  }
}

TEST(NcclImport, LogsStartingAtDifferentOpCountsAlignByOpCount) {
  // Rank 1's log starts at opCount 2 (rotated, or cut by a grep window): its first op pairs with
  // rank 0's opCount 2, not with rank 0's first; rank 0's ops 0 and 1 have no counterpart.
  auto rank_log = [](const std::string& name, int pid, uint64_t first, bool init) {
    std::string text;
    if (init) {
      text += fmt::format(
          "node{}:{}:{} [0] NCCL INFO comm 0x9{}0 rank {} nranks 2 cudaDev 0 busId 1000 - Init "
          "COMPLETE\n",
          pid, pid, pid, pid, pid);
    }
    for (uint64_t c = first; c < 6; ++c) {
      text += fmt::format(
          "node{}:{}:{} [0] NCCL INFO AllReduce: opCount {:x} sendbuff 0x7f00 recvbuff 0x7f00 "
          "count {} datatype 7 op 0 root 0 comm 0x9{}0 [nranks=2] stream 0x1\n",
          pid, pid, pid, c, 100 * (c + 1), pid);
    }
    return write_file(name, text);
  };
  for (const bool init : {false, true}) {
    SCOPED_TRACE(init ? "with init lines" : "COLL only");
    const std::string a = rank_log("r0.log", 0, 0, init);
    const std::string b = rank_log("r1.log", 1, 2, init);
    auto t = import_files({a, b});
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    const auto r0 = ops_of(*t, 0);
    const auto r1 = ops_of(*t, 1);
    ASSERT_EQ(r0.size(), 4u);
    ASSERT_EQ(r1.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(r0[i].op_count(), r1[i].op_count());
      EXPECT_EQ(r0[i].count(), r1[i].count());
      EXPECT_EQ(r0[i].index(), i);
    }
    ASSERT_EQ(t->report.problems_total, 1u);
    EXPECT_NE(t->report.problems[0].what.find("rank 0"), std::string::npos)
        << t->report.problems[0].what;
    EXPECT_THAT(import_files({a, b}, true), StatusIs(StatusCode::kInvalidArgument));
  }
}

TEST(NcclImport, GroupsCommunicatorsWithoutCommIds) {
  const Imported t = load("groups_no_commid.log");
  EXPECT_EQ(t.report.problems_total, 0u);
  ASSERT_EQ(t.header.communicators_size(), 7);  // world, TP {0-3} {4-7}, DP {r, r+4}
  EXPECT_EQ(ranks_of(t.header.communicators(0)), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(ranks_of(t.header.communicators(1)), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ranks_of(t.header.communicators(2)), (std::vector<uint32_t>{4, 5, 6, 7}));
  std::set<std::vector<uint32_t>> dp;
  for (int c = 3; c < 7; ++c) dp.insert(ranks_of(t.header.communicators(c)));
  EXPECT_EQ(dp, (std::set<std::vector<uint32_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  for (const v1::Op& op : t.ops) {
    const v1::Communicator* comm = comm_by_id(t, op.comm());
    ASSERT_NE(comm, nullptr);
    EXPECT_NE(std::find(comm->ranks().begin(), comm->ranks().end(), op.rank()),
              comm->ranks().end());
  }
}

TEST(NcclImport, MessyLogCountsWhatItCannotUse) {
  const Imported t = load("messy.log");
  EXPECT_EQ(t.header.nccl_version(), "2.19.3+cudaCUDA_MAJOR.CUDA_MINOR");
  EXPECT_EQ(ops_of(t, 0).size(), 5u);
  // Rank 0's opCount 0 came before its init line: rank 1's is left out with it, so that the two
  // ranks' ops pair by opCount.
  EXPECT_EQ(ops_of(t, 1).size(), 12u);
  EXPECT_EQ(ops_of(t, 1)[0].op_count(), 1u);
  const auto r0 = ops_of(t, 0);
  for (size_t i = 0; i < r0.size(); ++i) EXPECT_EQ(r0[i].count(), 100u * (i + 1));
  EXPECT_EQ(r0[4].reduce_op(), v1::REDUCE_OP_USER);
  EXPECT_EQ(op_source(t.header, r0[1]), testdata("messy.log") + ":6");
  EXPECT_EQ(op_source(t.header, r0[2]), testdata("messy.log") + ":8");
  EXPECT_EQ(op_source(t.header, r0[3]), testdata("messy.log") + ":10");
  ASSERT_EQ(t.report.problems_total, 7u);
  std::vector<std::string> where;
  for (const ImportProblem& p : t.report.problems) {
    where.push_back(p.where.substr(p.where.rfind(':') + 1));
  }
  EXPECT_EQ(where,
            (std::vector<std::string>{"2", "24", "25", "26", "27", "31", "(all inputs)"}));
  EXPECT_NE(t.report.problems[0].what.find("before any init line"), std::string::npos);
  EXPECT_NE(t.report.problems[6].what.find("starts at opCount"), std::string::npos);
  EXPECT_EQ(t.report.units_read, 31u);
}

TEST(NcclImport, StrictStopsAtTheFirstProblem) {
  auto t = import_files({testdata("messy.log")}, /*strict=*/true);
  ASSERT_THAT(t, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(t.status().message().find("messy.log:2:"), std::string::npos) << t.status().message();
  auto clean = import_files({testdata("nccl_2_18.log")}, /*strict=*/true);
  EXPECT_TRUE(clean.ok()) << clean.status().to_string();
}

TEST(NcclImport, OneFilePerProcess) {
  // Split the 2.18 log by process; the import of the pieces equals the import of the whole.
  std::ifstream in(testdata("nccl_2_18.log"));
  std::map<std::string, std::string> per_process;
  std::string line;
  while (std::getline(in, line)) {
    const std::string key = line.substr(0, line.find(':', line.find(':') + 1));
    per_process[key] += line + "\n";
  }
  ASSERT_EQ(per_process.size(), 4u);
  std::vector<std::string> files;
  for (const auto& [key, text] : per_process) {
    files.push_back(write_file(
        key.substr(0, key.find(':')) + "-" + key.substr(key.find(':') + 1) + ".log", text));
  }
  const Imported whole = load("nccl_2_18.log");
  auto parts = import_files(files);
  ASSERT_TRUE(parts.ok()) << parts.status().to_string();
  EXPECT_EQ(parts->report.problems_total, 0u);
  ASSERT_EQ(parts->ops.size(), whole.ops.size());
  ASSERT_EQ(parts->header.communicators_size(), whole.header.communicators_size());
  std::multiset<std::vector<uint32_t>> a, b;
  for (const auto& c : whole.header.communicators()) a.insert(ranks_of(c));
  for (const auto& c : parts->header.communicators()) b.insert(ranks_of(c));
  EXPECT_EQ(a, b);
  for (uint32_t r = 0; r < 4; ++r) {
    const auto x = ops_of(whole, r);
    const auto y = ops_of(*parts, r);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(x[i].kind(), y[i].kind());
      EXPECT_EQ(x[i].count(), y[i].count());
      EXPECT_EQ(ranks_of(*comm_by_id(whole, x[i].comm())),
                ranks_of(*comm_by_id(*parts, y[i].comm())));
    }
  }
  EXPECT_EQ(parts->header.source_files_size(), 4);
  // Each op names its line in its own file.
  std::set<uint32_t> files_named;
  for (const v1::Op& op : parts->ops) {
    ASSERT_LT(op.source_file(), 4u);
    files_named.insert(op.source_file());
    std::ifstream file(parts->header.source_files(static_cast<int>(op.source_file())));
    std::string text;
    for (uint64_t n = 0; n < op.source_line(); ++n) std::getline(file, text);
    EXPECT_NE(text.find(" count " + std::to_string(op.count()) + " "), std::string::npos)
        << op_source(parts->header, op) << ": " << text;
  }
  EXPECT_EQ(files_named.size(), 4u);
}

TEST(NcclImport, BadInput) {
  // Binary garbage, JSON, an empty file: clear errors in strict mode, counted problems otherwise.
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919) % 256);
  const std::vector<std::string> bad = {
      write_file("garbage.bin", garbage),
      write_file("trace.json", "{\"traceEvents\": [{\"name\": \"AllReduce\", \"ph\": \"X\"}]}\n"),
      write_file("empty.log", "")};
  for (const std::string& path : bad) {
    auto strict = import_files({path}, true);
    ASSERT_THAT(strict, StatusIs(StatusCode::kInvalidArgument)) << path;
    EXPECT_NE(strict.status().message().find(path + ":1"), std::string::npos)
        << strict.status().message();
    // Without a single collective there is nothing to replay: an error even when lenient.
    auto lenient = import_files({path}, false);
    ASSERT_THAT(lenient, StatusIs(StatusCode::kInvalidArgument)) << path;
    EXPECT_NE(lenient.status().message().find("no collective lines"), std::string::npos)
        << lenient.status().message();
  }
  auto missing = import_files({"/nonexistent/nccl.log"});
  ASSERT_THAT(missing, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(missing.status().message().find("/nonexistent/nccl.log"), std::string::npos);
  auto directory = import_files({testdata("")});
  ASSERT_THAT(directory, StatusIs(StatusCode::kInvalidArgument));
}

TEST(NcclImport, TruncatedFile) {
  std::ifstream in(testdata("nccl_2_18.log"), std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // Cut in the middle of the last collective line.
  const std::string cut = text.substr(0, text.size() - 60);
  const std::string path = write_file("cut.log", cut);
  auto t = import_files({path});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ops.size(), 35u);
  ASSERT_EQ(t->report.problems_total, 1u);
  EXPECT_EQ(t->report.problems[0].where, path + ":82");
  auto strict = import_files({path}, true);
  ASSERT_THAT(strict, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(strict.status().message().find(path + ":82"), std::string::npos);
}

TEST(NcclImport, IncompleteCommunicatorIsAProblem) {
  // Only rank 1 of a 2-rank comm is in the logs.
  const std::string path = write_file(
      "half.log",
      "h:1:1 [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype 7 op 0 "
      "root 0 comm 0x1 stream 0x1\n");
  auto t = import_files({path});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->report.problems_total, 1u);
  EXPECT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->ops[0].rank(), 1u);
  EXPECT_THAT(import_files({path}, true), StatusIs(StatusCode::kInvalidArgument));
}

TEST(NcclImport, LargeInputIsCutIntoPiecesCorrectly) {
  // More than one 16 MiB piece, with lines cut in two everywhere: nothing lost, nothing doubled.
  std::string text;
  text += "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n";
  text += "h:2:2 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 1 busId 1000 - Init COMPLETE\n";
  uint64_t expected = 0;
  while (text.size() < (40u << 20)) {
    const std::string n = std::to_string(expected);
    // Both ranks issue each all-reduce, under one opCount.
    text += "h:" + std::to_string(1 + expected % 2) + ":1 [0] NCCL INFO AllReduce: opCount " +
            std::to_string(expected / 2) + " sendbuff 0x1 recvbuff 0x1 count " + n + "\n" +
            "datatype 7 op 0 root 0 comm 0x1 stream 0x1\n";
    ++expected;
  }
  auto t = import_files({write_file("big.log", text)}, true);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  ASSERT_EQ(t->ops.size(), expected);
  for (uint64_t i = 0; i < expected; ++i) {
    ASSERT_EQ(t->ops[i].count(), i);
    ASSERT_EQ(t->ops[i].rank(), i % 2);
    ASSERT_EQ(t->ops[i].index(), i / 2);
    ASSERT_EQ(op_source(t->header, t->ops[i]),
              t->header.source_files(0) + ":" + std::to_string(3 + 2 * i));
  }
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Streamed (init lines first, then the collectives written as they are resolved) and stored (all
// ops kept, then written) must give the same trace and the same report.
void expect_streamed_as_stored(const std::vector<std::string>& inputs,
                               const std::function<void(ParsedLog&)>& alter_first_pass = nullptr) {
  const std::string streamed = (scratch_dir() / "streamed.trace").string();
  const std::string stored = (scratch_dir() / "stored.trace").string();
  auto a = import_nccl_logs_streamed(inputs, streamed, {}, alter_first_pass);
  auto b = import_nccl_logs(inputs, stored, {});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(a->ops, b->ops);
  EXPECT_EQ(a->ranks, b->ranks);
  EXPECT_EQ(a->communicators, b->communicators);
  EXPECT_EQ(a->units_read, b->units_read);
  EXPECT_EQ(a->problems_total, b->problems_total);
  ASSERT_EQ(a->problems.size(), b->problems.size());
  for (size_t i = 0; i < a->problems.size(); ++i) {
    EXPECT_EQ(a->problems[i].where, b->problems[i].where);
    EXPECT_EQ(a->problems[i].what, b->problems[i].what);
  }
  ASSERT_EQ(a->unread.size(), b->unread.size());
  for (size_t i = 0; i < a->unread.size(); ++i) {
    EXPECT_EQ(a->unread[i].kind, b->unread[i].kind);
    EXPECT_EQ(a->unread[i].lines, b->unread[i].lines);
    EXPECT_EQ(a->unread[i].first_where, b->unread[i].first_where);
  }
  const std::string bytes = file_bytes(stored);
  EXPECT_GT(bytes.size(), 0u);
  EXPECT_TRUE(file_bytes(streamed) == bytes) << "the streamed trace differs from the stored one";
}

TEST(NcclImport, StreamedTraceIsTheStoredOne) {
  for (const char* fixture : {"nccl_2_4.log", "nccl_2_7_send.log", "nccl_2_12_send.log",
                              "nccl_2_18.log", "nccl_2_21.log", "nccl_2_26.log", "nccl_2_28.log",
                              "nccl_2_29.log", "rccl.log", "groups_no_commid.log", "messy.log",
                              "tuning_and_unread.log"}) {
    SCOPED_TRACE(fixture);
    expect_streamed_as_stored({testdata(fixture)});
  }
  SCOPED_TRACE("several files");
  expect_streamed_as_stored({testdata("nccl_2_18.log"), testdata("messy.log")});
}

// A log whose init lines come first, over five 16 MiB pieces; `late_comm` adds a communicator
// created in the fourth piece, after the ops have started to be written.
std::string log_with_early_inits(bool late_comm) {
  std::string text = "h:1:1 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n";
  text += "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n";
  text += "h:2:2 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 1 busId 1000 - Init COMPLETE\n";
  bool created = false;
  for (uint64_t i = 0; text.size() < (66u << 20); ++i) {
    const std::string n = std::to_string(i);
    const std::string host = "h:" + std::to_string(1 + i % 2) + ":" + std::to_string(1 + i % 2) +
                             " [" + std::to_string(i % 2) + "] NCCL INFO ";
    const std::string op_count = std::to_string(i / 2);  // both ranks issue each collective
    text += host + "AllReduce: opCount " + op_count + " sendbuff 0x1 recvbuff 0x1 count " + n +
            " datatype 7 op 0 root 0 comm 0x1 [nranks=2] stream 0x1\n";
    if (late_comm && !created && text.size() > (56u << 20) && i % 2 == 0) {
      text += "h:1:1 [0] NCCL INFO comm 0x2 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n";
      text += "h:2:2 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 busId 1000 - Init COMPLETE\n";
      created = true;
    }
    if (created) {
      text += host + "Broadcast: opCount " + op_count +
              " sendbuff 0x1 recvbuff 0x1 count 4 datatype 1 op 0 root 1 comm 0x2 [nranks=2] "
              "stream 0x1\n";
    }
  }
  return text;
}


TEST(NcclImport, StreamedTraceIsTheStoredOneWhenInferredOrAligned) {
  // Streaming writes ops as it resolves them; inferring communicators and leaving ops out both
  // need every op first, so these imports start over stored, and must give the same trace.
  for (const char* fixture : {"coll_only_two_hosts.log", "coll_only_one_node_of_128.log",
                              "rccl_acc.log"}) {
    SCOPED_TRACE(fixture);
    expect_streamed_as_stored({testdata(fixture)});
  }
  SCOPED_TRACE("logs starting at different opCounts");
  std::string r0, r1;
  for (int rank = 0; rank < 2; ++rank) {
    std::string& text = rank == 0 ? r0 : r1;
    text += fmt::format(
        "n{}:5:5 [0] NCCL INFO comm 0x77 rank {} nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n",
        rank, rank);
    for (int c = rank == 0 ? 0 : 3; c < 8; ++c) {
      text += fmt::format(
          "n{}:5:5 [0] NCCL INFO AllGather: opCount {:x} sendbuff 0x1 recvbuff 0x2 count {} "
          "datatype 7 op 0 root 0 comm 0x77 [nranks=2] stream 0x1\n",
          rank, c, 10 + c);
    }
  }
  expect_streamed_as_stored({write_file("a0.log", r0), write_file("a1.log", r1)});
}
TEST(NcclImport, OneLogIsWrittenAsItIsReadOnceItsInitLinesStop) {
  for (const bool late_comm : {false, true}) {
    SCOPED_TRACE(late_comm ? "a communicator created late" : "init lines first");
    const std::string log = write_file("early_inits.log", log_with_early_inits(late_comm));
    const std::string out = (scratch_dir() / "early.trace").string();
    std::filesystem::remove(out);
    // What the output held while the log was still being read, and whether the reading started
    // over (progress going back).
    uint64_t written_while_reading = 0;
    uint64_t last_done = 0;
    bool started_over = false;
    ImportOptions options;
    options.progress = [&](uint64_t done, uint64_t total) {
      started_over = started_over || done < last_done;
      last_done = done;
      std::error_code error;
      const uint64_t size = std::filesystem::file_size(out, error);
      if (!error && done < total) written_while_reading = std::max(written_while_reading, size);
    };
    auto report = import_nccl_logs({log}, out, options);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    const std::string streamed = (scratch_dir() / "streamed.trace").string();
    auto reference = import_nccl_logs_streamed({log}, streamed, {});
    ASSERT_TRUE(reference.ok()) << reference.status().to_string();
    EXPECT_EQ(report->ops, reference->ops);
    EXPECT_EQ(report->communicators, late_comm ? 2u : 1u);
    EXPECT_TRUE(file_bytes(out) == file_bytes(streamed)) << "not the streamed import's trace";
    if (late_comm) {
      EXPECT_TRUE(started_over);
    } else {
      EXPECT_FALSE(started_over);
      EXPECT_GT(written_while_reading, 1u << 20);
    }
  }
}

TEST(NcclImport, StreamedImportStartsOverWhenThePassesDisagree) {
  // A first pass that missed comm rank 3's init lines: its layout has no member for that rank's
  // ops, so what was streamed must not stand.
  int dropped = 0;
  expect_streamed_as_stored({testdata("nccl_2_18.log")}, [&dropped](ParsedLog& log) {
    const auto from = std::remove_if(log.inits.begin(), log.inits.end(),
                                     [](const InitRecord& r) { return r.rank == 3; });
    dropped += static_cast<int>(log.inits.end() - from);
    log.inits.erase(from, log.inits.end());
  });
  EXPECT_GT(dropped, 0);
  // One that missed the version line: every op has its member, but the header differs.
  int versions = 0;
  expect_streamed_as_stored({testdata("nccl_2_18.log")}, [&versions](ParsedLog& log) {
    versions += static_cast<int>(log.versions.size());
    log.versions.clear();
  });
  EXPECT_GT(versions, 0);
}

TEST(NcclImport, StreamedTraceIsTheStoredOneAcrossPieces) {
  // Several 16 MiB pieces, with lines cut in two, interleaved messages, a communicator created
  // late, noise and bad lines: what the first pass reads must give the layout the second needs.
  std::string text;
  text += "h:1:1 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n";
  text += "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n";
  text += "h:2:2 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 1 busId 1000 - Init COMPLETE\n";
  uint64_t i = 0;
  while (text.size() < (36u << 20)) {
    const std::string n = std::to_string(i);
    const std::string host = "h:" + std::to_string(1 + i % 2) + ":" + std::to_string(1 + i % 2) +
                             " [" + std::to_string(i % 2) + "] NCCL INFO ";
    switch (i % 7) {
      case 0:  // cut in two
        text += host + "AllReduce: opCount " + n + " sendbuff 0x1 recvbuff 0x1 count " + n +
                "\ndatatype 7 op 0 root 0 comm 0x1 stream 0x1\n";
        break;
      case 1:  // two messages on one line
        text += host + "Broadcast: opCount " + n +
                " sendbuff 0x1 recvbuff 0x1 count 4 datatype 1 " +
                "op 0 root 1 comm 0x1 [nranks=2] stream 0x1 " + host + "Channel 00/0 : 0[0] -> " +
                "1[1] via P2P/IPC\n";
        break;
      case 2:
        text += "step " + n + " loss 2.5 Nothing to see\n";
        break;
      case 3:
        text += host + "AllGather: opCount " + n + " sendbuff 0x1 recvbuff 0x2 count x datatype 7" +
                " op 0 root 0 comm 0x1 stream 0x1\n";  // bad count
        break;
      default:
        text += "[1,0]<stdout>:" + host + "ReduceScatter: opCount " + n +
                " sendbuff 0x1 recvbuff 0x2 count " + n + " datatype 7 op 0 root 0 comm 0x1 " +
                "[nranks=2] stream 0x1\n";
    }
    if (i == 150000) {  // a second communicator, created in the middle
      text += "h:1:1 [0] NCCL INFO comm 0x2 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n";
      text += "h:2:2 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 busId 1000 - Init COMPLETE\n";
    }
    if (i > 150000 && i % 5 == 0) {
      text += host + "Send: opCount " + n +
              " sendbuff (nil) recvbuff 0x1 count 8 datatype 7 op 0 " + "root " +
              std::to_string(1 - i % 2) + " comm 0x2 [nranks=2] stream 0x1\n";
    }
    ++i;
  }
  expect_streamed_as_stored({write_file("big.log", text)});
}

}  // namespace
}  // namespace collide::traces::nccl
