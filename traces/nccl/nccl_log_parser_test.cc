#include "traces/nccl/nccl_log_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "traces/nccl/text_scan.h"

namespace collide::traces::nccl {
namespace {

constexpr std::string_view kColl =
    "AllReduce: opCount 1f sendbuff 0x7f00 recvbuff 0x7f80 count 4096 datatype 9 op 4 root 0 "
    "comm 0x55d0 [nranks=8] stream 0x5500";

TEST(NcclLineParser, ReadsCollectiveFields) {
  // Records point into the text, which must outlive them.
  const std::string text = "host-1:123:456 [3] NCCL INFO " + std::string(kColl) + "\n";
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.colls.size(), 1u);
  ASSERT_TRUE(log.problems.empty());
  const CollRecord& c = log.colls[0];
  EXPECT_EQ(c.kind, v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(c.op_count, 0x1fu);
  EXPECT_EQ(c.count, 4096u);
  EXPECT_EQ(c.datatype, v1::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(c.red_op, 4);
  EXPECT_EQ(c.comm, 0x55d0u);
  EXPECT_EQ(c.nranks, 8);
  EXPECT_FALSE(c.has_time);
  ASSERT_EQ(log.processes.size(), 1u);
  EXPECT_EQ(log.processes[c.process].host, "host-1");
  EXPECT_EQ(log.processes[c.process].pid, 123u);
  EXPECT_EQ(c.line, 1u);
}

TEST(NcclLineParser, TuningLinesAreNotCollectives) {
  // NCCL_DEBUG_SUBSYS=TUNING names the collective, then its size and chosen algorithm.
  const std::string text =
      "node3:41:41 [2] NCCL INFO AllGather: 1048576 Bytes -> Algo 1 proto 2 time 61.250000\n"
      "node3:41:41 [2] NCCL INFO AllReduce: 8 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n"
      "node3:41:41 [2] NCCL INFO 8 Bytes -> Algo 0 proto 0 time 12.500000\n"
      "node3:41:41 [2] NCCL INFO " + std::string(kColl) + "\n";
  const ParsedLog log = parse_log_text(text);
  EXPECT_TRUE(log.problems.empty()) << log.problems[0].what;
  ASSERT_EQ(log.colls.size(), 1u);
  EXPECT_EQ(log.colls[0].line, 4u);
}

TEST(NcclLineParser, TuningChoicesAreKeptPerCollectiveAlgorithmAndProtocol) {
  // Numbers before 2.24 (NCCL_ALGO_RING 1, NCCL_PROTO_SIMPLE 2), names after.
  const std::string text =
      "node3:41:41 [2] NCCL INFO AllGather: 1048576 Bytes -> Algo 1 proto 2 time 61.250000\n"
      "node3:41:41 [2] NCCL INFO AllGather: 4194304 Bytes -> Algo RING proto SIMPLE "
      "channel{Lo..Hi}={0..3}\n"
      "node3:41:41 [2] NCCL INFO AllReduce: 8 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n"
      "node3:41:41 [2] NCCL INFO AllReduce: 64 Bytes -> Algo 0 proto 0 time 12.500000\n"
      "node3:41:41 [2] NCCL INFO AllReduce: 65536 Bytes -> Algo 6 proto 1 time 20.000000\n"
      "node3:41:41 [2] NCCL INFO " + std::string(kColl) + "\n";
  const ParsedLog log = parse_log_text(text);
  EXPECT_TRUE(log.problems.empty()) << log.problems[0].what;
  ASSERT_EQ(log.colls.size(), 1u);
  ASSERT_EQ(log.tunings.size(), 3u);
  EXPECT_EQ(log.tunings[0].kind, v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(log.tunings[0].algo, "RING");
  EXPECT_EQ(log.tunings[0].proto, "SIMPLE");
  EXPECT_EQ(log.tunings[0].min_bytes, 1048576u);
  EXPECT_EQ(log.tunings[0].max_bytes, 4194304u);
  EXPECT_EQ(log.tunings[0].lines, 2u);
  EXPECT_EQ(log.tunings[1].algo, "TREE");
  EXPECT_EQ(log.tunings[1].proto, "LL");
  EXPECT_EQ(log.tunings[1].max_bytes, 64u);
  EXPECT_EQ(log.tunings[2].algo, "PAT");
  EXPECT_EQ(log.tunings[2].proto, "LL128");
  // An algorithm a newer NCCL added is kept as printed; a line of another shape is counted as
  // not read, not a problem (the choice is only a hint).
  const ParsedLog newer = parse_log_text(
      "n:1:1 [0] NCCL INFO AllReduce: 8 Bytes -> Algo 9 proto 0 time 1.0\n"
      "n:1:1 [0] NCCL INFO AllReduce: 8 Bytes -> Algorithm TREE\n");
  EXPECT_TRUE(newer.problems.empty());
  ASSERT_EQ(newer.tunings.size(), 1u);
  EXPECT_EQ(newer.tunings[0].algo, "9");
  EXPECT_EQ(newer.tunings[0].proto, "LL");
  ASSERT_EQ(newer.unread.size(), 1u);
  EXPECT_EQ(newer.unread[0].kind, "NCCL INFO TUNING lines of another shape");
}

TEST(NcclLineParser, LinesOfKindsNotReadAreCountedByKind) {
  const std::string text =
      "node3:41:41 [2] NCCL INFO Bootstrap : Using eth0:10.1.0.3<0>\n"
      "node3:41:41 [2] NCCL INFO cudaDriverVersion 12020\n"
      "node3:41:41 [2] NCCL INFO Bootstrap : Using eth1:10.2.0.3<0>\n"
      "node3:41:41 [2] NCCL INFO Channel 00/0 : 0[2] -> 1[3] via P2P/IPC\n"
      "node3:41:41 [2] NCCL INFO 2 coll channels, 2 nvls channels, 2 p2p channels\n"
      "node3:41:41 [2] NCCL WARN NET/IB : Got completion with error 12\n"
      "## [1000.5] [0:0] 0x0 KL HWID 4220a110 op_count 0\n"
      "epoch 1 step 10 loss 2.31\n"
      "\n"
      "## [1001.5] [0:1] 0x1 KL HWID 4220a110 op_count 1\n"
      "node3:41:41 [2] NCCL INFO " + std::string(kColl) + "\n";
  const ParsedLog log = parse_log_text(text);
  EXPECT_TRUE(log.problems.empty()) << log.problems[0].what;
  ASSERT_EQ(log.colls.size(), 1u);
  std::vector<std::pair<std::string, uint64_t>> kinds;
  for (const UnreadKind& k : log.unread) kinds.emplace_back(k.kind, k.lines);
  EXPECT_EQ(kinds, (std::vector<std::pair<std::string, uint64_t>>{
                       {"NCCL INFO Bootstrap", 2},
                       {"NCCL INFO cudaDriverVersion", 1},
                       {"NCCL INFO Channel", 1},
                       {"NCCL INFO N coll", 1},
                       {"NCCL WARN", 1},
                       {"`##` lines (RCCL kernel trace)", 2},
                       {"lines without an NCCL message", 1},
                   }));
  EXPECT_EQ(log.unread[0].first_line, 1u);
  EXPECT_EQ(log.unread[0].example, "Bootstrap : Using eth0:10.1.0.3<0>");
  EXPECT_EQ(log.unread[5].first_line, 7u);
  EXPECT_EQ(log.unread[6].example, "epoch 1 step 10 loss 2.31");
}

TEST(NcclLineParser, UnreadKindsBeyondTheLimitAreCountedTogether) {
  std::string text;
  for (size_t i = 0; i < kMaxUnreadKinds + 5; ++i) {
    text += "h:1:1 [0] NCCL INFO NCCL_VAR_" + std::to_string(i) + " set by environment to 1\n";
  }
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.unread.size(), kMaxUnreadKinds);
  EXPECT_EQ(log.unread.back().kind, "other kinds");
  EXPECT_EQ(log.unread.back().lines, 6u);
}

TEST(NcclLineParser, SkipsFieldsOfOtherNames) {
  // RCCL prints `acc <p>` between recvbuff and count, and `task`/`globalrank` after the stream.
  const std::string text =
      "mi300x-2:900:900 [5] NCCL INFO AllReduce: opCount 3 sendbuff 0x7e10 recvbuff 0x7e10 acc "
      "(nil) count 512 datatype 7 op 0 root 0 comm 0x6a10 [nranks=8] stream 0x6b00 task 0 "
      "globalrank 13\n";
  const ParsedLog log = parse_log_text(text);
  ASSERT_TRUE(log.problems.empty()) << log.problems[0].what;
  ASSERT_EQ(log.colls.size(), 1u);
  EXPECT_EQ(log.colls[0].op_count, 3u);
  EXPECT_EQ(log.colls[0].count, 512u);
  EXPECT_EQ(log.colls[0].comm, 0x6a10u);
  EXPECT_EQ(log.colls[0].nranks, 8);
  // NCCL's own fields out of place still make the line wrong.
  const ParsedLog wrong = parse_log_text(
      "h:1:2 [0] NCCL INFO AllReduce: opCount 3 recvbuff 0x1 sendbuff 0x1 count 1 datatype 7 op "
      "0 root 0 comm 0x1 stream 0x1\n");
  ASSERT_EQ(wrong.problems.size(), 1u);
  EXPECT_EQ(wrong.problems[0].what, "collective line: expected a field name");
}

TEST(NcclLineParser, InterleavedWritersAreCounted) {
  // Two processes writing at once: one's prefix, then the other's whole line. The first one's
  // message is lost; the line is a problem, not silently the second's. Seen twice, since a line
  // seen before must not pass by a shortcut the second time.
  const std::string twice = "gpu3:11:12 [1] gpu4:21:22 [0] NCCL INFO " + std::string(kColl) + "\n";
  const std::string text = twice + twice;  // records point into it
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.colls.size(), 2u);
  EXPECT_EQ(log.processes[log.colls[0].process].host, "gpu4");
  ASSERT_EQ(log.problems.size(), 2u);
  EXPECT_NE(log.problems[0].what.find("two writers"), std::string::npos) << log.problems[0].what;
  EXPECT_EQ(log.problems[1].line, 2u);
  // Launcher text and timestamps are no second prefix.
  for (const std::string launcher : {"[1,0]<stdout>:", "(RayTrainWorker pid=615, ip=10.72.7.6) ",
                                     "[2025-01-02 03:04:05] ", "2025-01-02T03:04:05.123Z "}) {
    const ParsedLog ok = parse_log_text(launcher + "gpu4:21:22 [0] NCCL INFO " + std::string(kColl));
    EXPECT_TRUE(ok.problems.empty()) << launcher;
  }
}

TEST(NcclLineParser, FindsThePrefixAfterLauncherText) {
  for (const std::string launcher :
       {"", "[1,0]<stdout>:", "[0] ", "(RayTrainWorker pid=615, ip=10.72.7.6) ",
        "some text: ", "[2025-01-02 03:04:05] "}) {
    const std::string text = launcher + "gpu7:99:100 [0] NCCL INFO " + std::string(kColl);
    const ParsedLog log = parse_log_text(text);
    ASSERT_EQ(log.colls.size(), 1u) << launcher;
    EXPECT_EQ(log.processes[0].host, "gpu7") << launcher;
    EXPECT_EQ(log.processes[0].pid, 99u) << launcher;
  }
  // An empty host (NCCL cuts it at the first dot) is still a host.
  const std::string text = ":99:100 [0] NCCL INFO " + std::string(kColl);
  const ParsedLog empty_host = parse_log_text(text);
  ASSERT_EQ(empty_host.colls.size(), 1u);
  EXPECT_EQ(empty_host.processes[0].host, "");
}

TEST(NcclLineParser, ReadsTimestamps) {
  uint64_t ns = 0;
  size_t used = 0;
  ASSERT_TRUE(parse_timestamp("2025-03-10 12:35:01.123456 rest", ns, used));
  EXPECT_EQ(ns, 1741610101123456000ull);
  EXPECT_EQ(used, 26u);
  ASSERT_TRUE(parse_timestamp("[1970-01-01T00:00:01.5Z] x", ns, used));
  EXPECT_EQ(ns, 1500000000ull);
  EXPECT_EQ(used, 24u);
  EXPECT_FALSE(parse_timestamp("2025-13-10 12:35:01", ns, used));
  EXPECT_FALSE(parse_timestamp("2025-03-10", ns, used));
  const ParsedLog log =
      parse_log_text("[2025-03-10 12:35:01.000000007] h:1:1 [0] NCCL INFO " + std::string(kColl));
  ASSERT_EQ(log.colls.size(), 1u);
  EXPECT_TRUE(log.colls[0].has_time);
  EXPECT_EQ(log.colls[0].time_ns, 1741610101000000007ull);
}

TEST(NcclLineParser, AcceptsEveryOpAndBothSendConventions) {
  const std::pair<const char*, v1::OpKind> ops[] = {{"AllReduce", v1::OP_KIND_ALL_REDUCE},
                                                    {"AllGather", v1::OP_KIND_ALL_GATHER},
                                                    {"ReduceScatter", v1::OP_KIND_REDUCE_SCATTER},
                                                    {"Broadcast", v1::OP_KIND_BROADCAST},
                                                    {"Reduce", v1::OP_KIND_REDUCE},
                                                    {"Send", v1::OP_KIND_SEND},
                                                    {"Recv", v1::OP_KIND_RECV},
                                                    {"AlltoAll", v1::OP_KIND_ALL_TO_ALL},
                                                    {"Gather", v1::OP_KIND_GATHER},
                                                    {"Scatter", v1::OP_KIND_SCATTER}};
  std::string text;
  for (const auto& [name, kind] : ops) {
    text += std::string("h:1:1 [0] NCCL INFO ") + name +
            ": opCount 0 sendbuff (nil) recvbuff 0x10 count 7 datatype 0 op 0 root 3 comm 0x1 "
            "stream 0x2  \n";
  }
  text +=
      "h:1:1 [0] NCCL INFO Send: opCount 0 sendbuff 0x10 recvbuff (nil) count 7 datatype 0 "
      "op 0 root 3 comm 0x1 [nranks=4] stream 0x2\n";
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.colls.size(), 11u);
  EXPECT_TRUE(log.problems.empty());
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(log.colls[i].kind, ops[i].second) << ops[i].first;
    EXPECT_EQ(log.colls[i].root, 3);
    EXPECT_EQ(log.colls[i].nranks, -1);
    EXPECT_TRUE(log.colls[i].send_buffer_null);
  }
  EXPECT_FALSE(log.colls[10].send_buffer_null);
}

TEST(NcclLineParser, DatatypesAndUserReductionOps) {
  std::string text;
  for (int dt = 0; dt <= 12; ++dt) {
    text += "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 1 datatype " +
            std::to_string(dt) + " op " + std::to_string(dt + 3) + " root 0 comm 0x1 stream 0x2\n";
  }
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.colls.size(), 12u);
  for (int dt = 0; dt < 12; ++dt) {
    EXPECT_EQ(log.colls[static_cast<size_t>(dt)].datatype, static_cast<v1::DataType>(dt + 1));
    EXPECT_EQ(log.colls[static_cast<size_t>(dt)].red_op, dt + 3);
  }
  ASSERT_EQ(log.problems.size(), 1u);  // datatype 12 does not exist
  EXPECT_EQ(log.problems[0].line, 13u);
}

TEST(NcclLineParser, InitLinesOfEveryVersion) {
  const ParsedLog log = parse_log_text(
      "h:1:1 [0] NCCL INFO comm 0xa rank 1 nranks 4 cudaDev 2 nvmlDev 2 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO comm 0xb rank 1 nranks 4 cudaDev 2 busId 1a000 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO comm 0xc rank 1 nranks 4 cudaDev 2 nvmlDev 2 busId 1a000 commId "
      "0x5e1e - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO comm 0xd rank 1 nRanks 4 nNodes 1 localRanks 4 localRank 1 MNNVL 0\n"
      "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xe rank 1 nranks 4 cudaDev 2 nvmlDev 2 busId "
      "1a000 commId 0x77 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO ncclCommSplit comm 0xf rank 0 nranks 2 cudaDev 2 nvmlDev 2 busId 1a000 "
      "parent 0xe splitCount 1 color -3 key 5 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO [Rank 1] ncclCommInitRankConfig comm 0x10 rank 1 nranks 4 cudaDev 2 "
      "nvmlDev 2 busId 1a000 commId 0x78 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x11 rank 1 nranks 4 cudaDev 2 - Init START\n"
      "h:1:1 [0] NCCL INFO comm 0x11 rank 1 nranks 4 cudaDev 2 busId 1a000 - Destroy COMPLETE\n");
  EXPECT_TRUE(log.problems.empty());
  ASSERT_EQ(log.inits.size(), 8u);
  for (const InitRecord& init : log.inits) {
    EXPECT_EQ(init.rank, init.comm == 0xf ? 0 : 1);
    EXPECT_EQ(init.nranks, init.comm == 0xf ? 2 : 4);
    EXPECT_EQ(init.cuda_dev, init.comm == 0xd ? 0 : 2) << init.comm;  // 0xd: from the prefix
  }
  EXPECT_EQ(log.inits[2].comm_id, "0x5e1e");
  EXPECT_EQ(log.inits[3].stage, InitStage::kInfo);
  EXPECT_TRUE(log.inits[5].split);
  EXPECT_EQ(log.inits[5].parent, 0xeu);
  EXPECT_EQ(log.inits[5].color, -3);
  EXPECT_EQ(log.inits[5].key, 5);
  EXPECT_EQ(log.inits[6].comm_id, "0x78");
  EXPECT_EQ(log.inits[7].stage, InitStage::kInfo);
}

TEST(NcclLineParser, BadInitLinesAreProblems) {
  const ParsedLog log = parse_log_text(
      "h:1:1 [0] NCCL INFO comm 0xa rank 9 nranks 4 cudaDev 2 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO comm 0xa rank x nranks 4 cudaDev 2 - Init COMPLETE\n"
      "h:1:1 [0] NCCL INFO comm 0xa rank 1 cudaDev 2 - Init COMPLETE\n");
  EXPECT_TRUE(log.inits.empty());
  ASSERT_EQ(log.problems.size(), 3u);
  EXPECT_EQ(log.problems[2].line, 3u);
}

TEST(NcclLineParser, VersionLines) {
  const ParsedLog log = parse_log_text(
      "NCCL version 2.4.8+cuda10.1\n"
      "h:1:1 [0] NCCL INFO NCCL version 2.22.3+cuda12.6\n"
      "[1,0]<stdout>:NCCL version 2.19.3+cudaCUDA_MAJOR.CUDA_MINOR\n");
  ASSERT_EQ(log.versions.size(), 3u);
  EXPECT_EQ(log.versions[0].version, "2.4.8+cuda10.1");
  EXPECT_EQ(log.versions[1].version, "2.22.3+cuda12.6");
  EXPECT_EQ(log.versions[2].version, "2.19.3+cudaCUDA_MAJOR.CUDA_MINOR");
  EXPECT_EQ(log.nccl_lines, 3u);
}

TEST(NcclLineParser, GraphAndNetLines) {
  const ParsedLog log = parse_log_text(
      "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
      "h:1:1 [0] NCCL INFO Channel 01/02 :    0   3   2 ...\n"
      "h:1:1 [0] NCCL INFO Channel 02/04 :    0   3  12...\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
      "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0\n"
      "h:1:1 [0] NCCL INFO Ring 01 : 3 -> 0 -> 1\n"
      "h:1:1 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 2/3/-1->0->5\n"
      "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB "
      "eth0:10.0.0.1<0>\n"
      "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>\n");
  EXPECT_TRUE(log.problems.empty());
  ASSERT_EQ(log.graphs.size(), 8u);
  EXPECT_EQ(log.graphs[0].kind, GraphKind::kRingOrder);
  EXPECT_EQ(log.graphs[0].values, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_FALSE(log.graphs[0].truncated);
  EXPECT_EQ(log.graphs[1].channel, 1u);
  EXPECT_TRUE(log.graphs[1].truncated);
  EXPECT_EQ(log.graphs[1].values, (std::vector<int32_t>{0, 3, 2}));
  // A number glued to the dots may itself be cut short ("12" of "123"): dropped.
  EXPECT_TRUE(log.graphs[2].truncated);
  EXPECT_EQ(log.graphs[2].values, (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(log.graphs[3].kind, GraphKind::kRingNeighbours);
  EXPECT_EQ(log.graphs[3].values, (std::vector<int32_t>{3, 0, 1}));
  EXPECT_EQ(log.graphs[4].kind, GraphKind::kTree);
  EXPECT_EQ(log.graphs[4].values, (std::vector<int32_t>{0, -1, 1, -1, -1}));
  EXPECT_EQ(log.graphs[5].channel, 1u);
  EXPECT_EQ(log.graphs[5].values, (std::vector<int32_t>{0, 5, 2, 3, -1}));
  EXPECT_EQ(log.graphs[6].nics, (std::vector<std::string>{"mlx5_0:1", "mlx5_1:1"}));
  EXPECT_EQ(log.graphs[7].nics, (std::vector<std::string>{"eth0", "eth1"}));
}

TEST(NcclLineParser, TwoWritersOnOneLine) {
  const std::string text = "a:1:1 [0] NCCL INFO " + std::string(kColl) + " b:2:2 [1] NCCL INFO " +
                           std::string(kColl) + "\n";
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.colls.size(), 2u);
  EXPECT_EQ(log.processes[log.colls[0].process].host, "a");
  EXPECT_EQ(log.processes[log.colls[1].process].host, "b");
  EXPECT_EQ(log.colls[0].count, 4096u);
  EXPECT_EQ(log.colls[1].line, 1u);
}

TEST(NcclLineParser, JoinsALineCutShort) {
  const ParsedLog log = parse_log_text(
      "a:1:1 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 77\n"
      "  datatype 7 op 0 root 0 comm 0x9 stream 0x1\n"
      "a:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x1 count 78 datatype 7 "
      "op 0 root 0 comm 0x9 [nranks=2]\n"
      "stream 0x1\n"
      "a:1:1 [0] NCCL INFO AllReduce: opCount 3 sendbuff 0x1 recvbuff 0x1 count 79\n"
      "a:1:1 [0] NCCL INFO AllReduce: opCount 4 sendbuff 0x1 recvbuff 0x1 count 80");
  ASSERT_EQ(log.colls.size(), 2u);
  EXPECT_EQ(log.colls[0].count, 77u);
  EXPECT_EQ(log.colls[0].line, 1u);
  EXPECT_EQ(log.colls[1].count, 78u);
  EXPECT_EQ(log.colls[1].line, 3u);
  // The third is cut and followed by another NCCL line; the fourth is cut by the end of the file.
  ASSERT_EQ(log.problems.size(), 2u);
  EXPECT_EQ(log.problems[0].line, 5u);
  EXPECT_EQ(log.problems[1].line, 6u);
  EXPECT_EQ(log.lines, 6u);
}

TEST(NcclLineParser, NcclTestsRowsAndNoiseAreNotProblems) {
  const ParsedLog log = parse_log_text(
      "#  Rank  0 Group  0 Pid  1 on node device  0 [0x1b] NVIDIA H100\n"
      "a:1:1 [0] NCCL INFO " +
      std::string(kColl) +
      "     1048576        262144     float     sum      -1    81.21   12.91   19.37      0\n"
      "a:1:1 [0] NCCL INFO Setting affinity for GPU 0 to ffff\n"
      "a:1:1 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer\n"
      "\x01\x02\xff garbage\n");
  EXPECT_EQ(log.colls.size(), 1u);
  EXPECT_TRUE(log.problems.empty());
  EXPECT_EQ(log.lines, 5u);
}

TEST(NcclLineParser, PiecesParseLikeTheWhole) {
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text += "a:1:1 [0] NCCL INFO AllReduce: opCount " + std::to_string(i) +
            " sendbuff 0x1 recvbuff 0x1 count " + std::to_string(i) + "\n";
    text += "datatype 7 op 0 root 0 comm 0x9 stream 0x1\n";  // every line is cut and joined
  }
  const ParsedLog whole = parse_log_text(text);
  ASSERT_EQ(whole.colls.size(), 50u);
  EXPECT_TRUE(whole.problems.empty());
  // Cut at every line boundary: the continuation must be read exactly once.
  for (size_t cut = text.find('\n') + 1; cut < text.size(); cut = text.find('\n', cut) + 1) {
    ParsedLog a, b;
    const char* t = text.data();
    parse_log_piece(t, t + text.size(), t, t + cut, a);
    parse_log_piece(t, t + text.size(), t + cut, t + text.size(), b);
    ASSERT_EQ(a.colls.size() + b.colls.size(), 50u) << cut;
    ASSERT_TRUE(a.problems.empty() && b.problems.empty()) << cut;
    ASSERT_EQ(a.lines + b.lines, 100u) << cut;
  }
}

TEST(NcclLineParser, NeverCrashesOnPrefixesOfALine) {
  const std::string line = "[1,0]<stdout>:h:1:1 [0] NCCL INFO [Rank 0] " + std::string(kColl);
  for (size_t n = 0; n <= line.size(); ++n) {
    const ParsedLog log = parse_log_text(line.substr(0, n));
    EXPECT_LE(log.colls.size(), 1u);
  }
}

// The parser reads words and 16-byte blocks where the text goes on far enough, and bytes near
// its end: each case is parsed both ways, as the text's last line and followed by more lines.
struct BothWays {
  std::vector<std::string> texts;  // the records point into them
  std::vector<ParsedLog> logs;
  auto begin() const { return logs.begin(); }
  auto end() const { return logs.end(); }
};
BothWays parse_both_ways(const std::string& line) {
  const std::string filler =
      "\nsome application output that is long enough to leave every read in the text\n";
  BothWays both;
  both.texts = {line, line + filler + filler};
  for (const std::string& text : both.texts) both.logs.push_back(parse_log_text(text));
  return both;
}

std::string coll_line(const std::string& prefix, const std::string& op_count,
                      const std::string& count, const std::string& comm,
                      const std::string& nranks = "8") {
  return prefix + " NCCL INFO AllReduce: opCount " + op_count +
         " sendbuff 0x7f00 recvbuff (nil) count " + count + " datatype 7 op 0 root -3 comm 0x" +
         comm + " [nranks=" + nranks + "] stream 0x5500";
}

TEST(NcclLineParser, ReadsNumbersOfEveryLength) {
  const std::string decimals = "9876543210987654321";
  const std::string hex = "fEdCbA9876543210";
  for (size_t n = 1; n <= 19; ++n) {
    const std::string count = decimals.substr(0, n);
    for (const ParsedLog& log : parse_both_ways(coll_line("h:1:2 [0]", "1", count, "5"))) {
      ASSERT_EQ(log.colls.size(), 1u) << count;
      EXPECT_EQ(log.colls[0].count, std::stoull(count)) << count;
      EXPECT_EQ(log.colls[0].root, -3);
    }
  }
  for (size_t n = 1; n <= 16; ++n) {
    const std::string digits = hex.substr(0, n);
    for (const ParsedLog& log : parse_both_ways(coll_line("h:1:2 [0]", digits, "4", digits))) {
      ASSERT_EQ(log.colls.size(), 1u) << digits;
      EXPECT_EQ(log.colls[0].op_count, std::stoull(digits, nullptr, 16)) << digits;
      EXPECT_EQ(log.colls[0].comm, std::stoull(digits, nullptr, 16)) << digits;
    }
  }
  for (size_t n = 1; n <= 9; ++n) {
    const std::string nranks = decimals.substr(0, n);
    for (const ParsedLog& log : parse_both_ways(coll_line("h:1:2 [0]", "1", "4", "5", nranks))) {
      ASSERT_EQ(log.colls.size(), 1u) << nranks;
      EXPECT_EQ(log.colls[0].nranks, std::stoi(nranks)) << nranks;
    }
  }
  // One digit too many is a bad line, wherever it is.
  const std::pair<std::string, std::string> too_long[] = {
      {coll_line("h:1:2 [0]", "1", decimals + "1", "5"), "collective line: bad count"},
      {coll_line("h:1:2 [0]", hex + "1", "4", "5"), "collective line: bad opCount"},
      {coll_line("h:1:2 [0]", "1", "4", hex + "1"), "collective line: bad comm"}};
  for (const auto& [line, problem] : too_long) {
    for (const ParsedLog& log : parse_both_ways(line)) {
      EXPECT_TRUE(log.colls.empty()) << line;
      ASSERT_EQ(log.problems.size(), 1u) << line;
      EXPECT_EQ(log.problems[0].what, problem);
    }
  }
}

TEST(NcclLineParser, ReadsPrefixesOfEveryShape) {
  struct Case {
    std::string launcher, host, pid, tid, dev, gap;
  };
  std::vector<Case> cases;
  for (const std::string launcher : {"", "[1,7]<stdout>:", "(Worker pid=1) ", "x\x0eJ "}) {
    for (size_t host_size : {0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 45}) {
      std::string host;
      for (size_t i = 0; i < host_size; ++i) host += "gpu-nJde.7"[i % 10];
      cases.push_back({launcher, host, "40455", "40466", "1", " "});
    }
  }
  for (const std::string pid : {"7", "12345678", "123456789", "4294967295"}) {
    for (const std::string dev : {"0", "12", "-1", "12345678", "123456789"}) {
      cases.push_back({"", "gpu-node-008", pid, "1234567890123", dev, "  "});
    }
  }
  for (const Case& c : cases) {
    const std::string prefix = c.launcher + c.host + ":" + c.pid + ":" + c.tid + " [" + c.dev + "]";
    // A collective (the common path) and a ring line (the general one, which keeps the device).
    const std::string text = coll_line(prefix, "1", "4", "5") + "\n" + prefix + c.gap +
                             "NCCL INFO Ring 00 : 3 -> 0 -> 1";
    for (const ParsedLog& log : parse_both_ways(text)) {
      ASSERT_EQ(log.colls.size(), 1u) << text;
      ASSERT_EQ(log.graphs.size(), 1u) << text;
      ASSERT_EQ(log.processes.size(), 1u) << text;
      EXPECT_EQ(log.processes[0].host, c.host) << text;
      EXPECT_EQ(log.processes[0].pid, std::stoul(c.pid)) << text;
      EXPECT_EQ(log.graphs[0].prefix_dev, std::stoi(c.dev)) << text;
      EXPECT_TRUE(log.problems.empty()) << text;
    }
  }
  // A pid beyond 32 bits is not a prefix.
  for (const ParsedLog& log : parse_both_ways(coll_line("h:4294967296:1 [0]", "1", "4", "5"))) {
    EXPECT_TRUE(log.colls.empty());
    ASSERT_EQ(log.problems.size(), 1u);
  }
}

TEST(NcclLineParser, KeepsProcessesApartAsTheirTableGrows) {
  // Host names of every size that differ only in the middle (or not at all, with another pid),
  // enough of them in one piece to make the process table grow several times.
  std::vector<std::pair<std::string, uint32_t>> processes;
  for (size_t size = 1; size <= 40; ++size) {
    for (char middle : {'a', 'b', 'c'}) {
      std::string host(size, 'n');
      host[size / 2] = middle;
      for (uint32_t pid : {100u, 101u, 65636u, 4294967295u}) processes.emplace_back(host, pid);
    }
  }
  std::string text;
  std::vector<size_t> expected;  // the process of each line
  std::mt19937_64 rng(11);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < processes.size(); ++i) {
      const size_t which = round == 0 ? i : rng() % processes.size();
      const auto& [host, pid] = processes[which];
      text += coll_line(host + ":" + std::to_string(pid) + ":9 [0]", "1", "4", "5") + "\n";
      expected.push_back(which);
    }
  }
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.colls.size(), expected.size());
  ASSERT_EQ(log.processes.size(), processes.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const ProcessRef& p = log.processes[log.colls[i].process];
    ASSERT_EQ(p.host, processes[expected[i]].first) << i;
    ASSERT_EQ(p.pid, processes[expected[i]].second) << i;
  }
}

// Lines whose whole prefixes are told apart by one byte (at their start, middle or end), with
// launcher text and with times, from enough processes in random order that prefixes keep taking
// each other's places in the table of prefixes already read: each line still gets its own
// process and its own time.
TEST(NcclLineParser, TellsPrefixesApartByEveryByte) {
  struct Writer {
    std::string prefix;  // everything before "NCCL INFO"
    size_t process;
    bool timed;
  };
  std::vector<std::pair<std::string, uint32_t>> processes;
  std::vector<Writer> writers;
  for (uint32_t i = 0; i < 1500; ++i) {
    const std::string host = "gpu-node-" + std::to_string(i % 300);
    processes.emplace_back(host, 4000 + i / 300);
    const std::string tail = host + ":" + std::to_string(4000 + i / 300) + ":77 [" +
                             std::to_string(i % 8) + "] ";
    // The same process again, its prefix one byte longer, or changed at its start.
    for (const std::string launcher : {"", "[1,7]<stdout>:", "[1,8]<stdout>:", "[1,17]<stdout>:"}) {
      writers.push_back({launcher + tail, i, false});
    }
    // A time that changes the prefix's bytes from line to line (as it would), or by chance does not.
    writers.push_back({"2025-03-10 12:35:0" + std::to_string(i % 10) + " " + tail, i, true});
  }
  // Prefixes of 43 bytes that differ only at byte 18, away from their first and last 16.
  for (char c = 'a'; c <= 'z'; ++c) {
    processes.emplace_back(std::string("rack") + c + "-node-long", 4000);
    writers.push_back({"[1,7]<stdout>:" + processes.back().first + ":4000:77 [0] ",
                       processes.size() - 1, false});
  }
  std::string text;
  std::vector<size_t> order;
  std::mt19937_64 rng(5);
  for (int line = 0; line < 40000; ++line) {
    const size_t w = rng() % writers.size();
    text += writers[w].prefix + "NCCL INFO " + std::string(kColl) + "\n";
    order.push_back(w);
  }
  const ParsedLog log = parse_log_text(text);
  ASSERT_EQ(log.colls.size(), order.size());
  ASSERT_TRUE(log.problems.empty());
  for (size_t i = 0; i < order.size(); ++i) {
    const Writer& w = writers[order[i]];
    const ProcessRef& p = log.processes[log.colls[i].process];
    ASSERT_EQ(p.host, processes[w.process].first) << i << ": " << w.prefix;
    ASSERT_EQ(p.pid, processes[w.process].second) << i << ": " << w.prefix;
    ASSERT_EQ(log.colls[i].has_time, w.timed) << i << ": " << w.prefix;
    if (w.timed) {
      ASSERT_EQ(log.colls[i].time_ns, (1741610100ull + w.process % 10) * 1000000000ull)
          << w.prefix;
    }
  }
}

TEST(LineFinder, FindsWhatScanLineFinds) {
  // Every length and start, consecutive lines and skipped ones, with the bytes the finder's
  // one-compare marks also take ('J', 0x0E) and stretches longer than its 64-byte blocks.
  std::mt19937_64 rng(5);
  const char alphabet[] = {'a', 'N', '\n', ' ', 'J', '\x0e', 'n'};
  for (int round = 0; round < 3000; ++round) {
    std::string text(rng() % 400, 'x');
    for (char& c : text) c = alphabet[rng() % (rng() % 8 == 0 ? 7 : 2)];
    const char* b = text.data();
    const char* e = b + text.size();
    LineFinder finder(e);
    const char* p = text.empty() ? b : b + rng() % text.size();
    while (p < e) {
      const LineScan expected = scan_line(p, e);
      const LineScan found = finder.next(p);
      ASSERT_EQ(found.end, expected.end) << round;
      ASSERT_EQ(found.first_capital, expected.first_capital) << round;
      // scan_line is exact up to three, which is all callers tell apart.
      ASSERT_EQ(std::min(found.capitals, 3u), std::min(expected.capitals, 3u)) << round;
      const char* next = expected.end + 1;
      // Sometimes skip a line, as a joined continuation does.
      if (rng() % 5 == 0 && next < e) next = scan_line(next, e).end + 1;
      p = next;
    }
  }
}

}  // namespace
}  // namespace collide::traces::nccl
