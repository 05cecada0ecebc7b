#include "traces/flight_recorder/fr_import.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/status_matchers.h"
#include "traces/analysis/stats_report.h"
#include "traces/analysis/trace_stats.h"
#include "traces/analysis/trace_validator.h"
#include "traces/trace_test_util.h"

namespace collide::traces::flight_recorder {
namespace {

namespace fs = std::filesystem;


class FlightRecorderImport : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collide_fr_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string out(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

const std::string kData = COLLIDE_FR_TESTDATA;

TEST_F(FlightRecorderImport, PickleAndJsonDumpsGiveTheSameTrace) {
  auto from_pickle = import_flight_recorder({kData + "/fr_pickle"}, out("p.trace"), {});
  ASSERT_TRUE(from_pickle.ok()) << from_pickle.status().message();
  auto from_json = import_flight_recorder({kData + "/fr_json"}, out("j.trace"), {});
  ASSERT_TRUE(from_json.ok()) << from_json.status().message();
  EXPECT_EQ(from_pickle->problems_total, 0u);
  EXPECT_EQ(from_pickle->ranks, 8u);
  EXPECT_EQ(from_pickle->communicators, 3u);
  const LoadedTrace p = load_trace(out("p.trace"));
  const LoadedTrace j = load_trace(out("j.trace"));
  ASSERT_EQ(p.ops.size(), j.ops.size());
  for (size_t i = 0; i < p.ops.size(); ++i) {
    v1::Op a = p.ops[i], b = j.ops[i];
    a.clear_source();  // names the file, which differs
    b.clear_source();
    EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString()) << i;
  }
  EXPECT_EQ(p.header.source_format(), v1::SOURCE_FORMAT_FLIGHT_RECORDER);
  EXPECT_EQ(p.header.world_size(), 8u);
}

TEST_F(FlightRecorderImport, OpsCarrySizesStatesAndTimes) {
  auto report = import_flight_recorder({kData + "/fr_pickle"}, out("t.trace"), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const LoadedTrace l = load_trace(out("t.trace"));
  // Rank 0 held world collectives 3..12 (its ring buffer lost 1 and 2), so every rank's world
  // sequence starts at 3; the group all-gathers (4, 8) and rank 0's send stay.
  std::map<uint32_t, std::vector<const v1::Op*>> by_rank;
  for (const v1::Op& op : l.ops) by_rank[op.rank()].push_back(&op);
  ASSERT_EQ(by_rank.size(), 8u);
  EXPECT_EQ(by_rank[0].size(), 10u + 2u + 1u);
  EXPECT_EQ(by_rank[5].size(), 9u + 2u);  // never issued collective 12
  EXPECT_EQ(l.header.metadata().at("flight_recorder.entries_before_common_window"), "14");
  const v1::Op& first = *by_rank[1][0];
  EXPECT_EQ(first.kind(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(first.op_count(), 3u);
  EXPECT_EQ(first.index(), 0u);
  EXPECT_EQ(first.comm(), "0");
  EXPECT_EQ(first.count(), 1024u * 1024u);
  EXPECT_EQ(first.datatype(), v1::DATA_TYPE_FLOAT32);
  EXPECT_EQ(first.bytes(), 4u * 1024u * 1024u);
  EXPECT_EQ(first.state(), v1::OP_STATE_COMPLETED);
  EXPECT_EQ(first.measured_duration_ns(), 1'260'000u);  // 1.26 ms on rank 1
  EXPECT_EQ(first.enqueue_time_ns(), 1'764'000'000'000'000'000u + 30'000'000u + 1u);
  bool saw_gather = false, saw_send = false;
  for (const v1::Op* op : by_rank[0]) {
    if (op->kind() == v1::OP_KIND_ALL_GATHER) {
      saw_gather = true;
      EXPECT_EQ(op->comm(), "1");
      EXPECT_EQ(op->bytes(), 2048u * 2u);  // what each rank sends, bfloat16
    }
    if (op->kind() == v1::OP_KIND_SEND) {
      saw_send = true;
      EXPECT_EQ(op->root(), 1);
      EXPECT_EQ(op->bytes(), 1024u);
      EXPECT_EQ(op->op_count(), 1u);
    }
  }
  EXPECT_TRUE(saw_gather);
  EXPECT_TRUE(saw_send);
  EXPECT_EQ(by_rank[3].back()->state(), v1::OP_STATE_SCHEDULED);
  EXPECT_EQ(by_rank[0].back()->state(), v1::OP_STATE_STARTED);
  EXPECT_FALSE(by_rank[0].back()->has_measured_duration_ns());
  for (const auto& c : l.header.communicators()) {
    if (c.id() == "2") {
      EXPECT_EQ(c.name(), "tp");
      EXPECT_EQ(std::vector<uint32_t>(c.ranks().begin(), c.ranks().end()),
                (std::vector<uint32_t>{4, 5, 6, 7}));
    }
  }
}

void expect_frontier(const analysis::HangFrontier& f) {
  ASSERT_TRUE(f.has_states);
  ASSERT_EQ(f.collectives.size(), 1u);
  const analysis::FrontierCollective& c = f.collectives[0];
  EXPECT_EQ(c.comm, "0");
  EXPECT_EQ(c.seq, 12u);
  EXPECT_EQ(c.kind, v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(c.not_issued, (std::vector<uint32_t>{5}));
  EXPECT_EQ(c.scheduled, (std::vector<uint32_t>{3}));
  EXPECT_EQ(c.started, (std::vector<uint32_t>{0, 1, 2, 4, 6, 7}));
  EXPECT_TRUE(c.completed.empty());
  EXPECT_TRUE(c.no_record.empty());
  EXPECT_EQ(f.point_to_point_total, 0u);
}

TEST_F(FlightRecorderImport, StatsAndValidateNameTheHangFrontierFromPickleAndJson) {
  for (const char* form : {"fr_pickle", "fr_json"}) {
    SCOPED_TRACE(form);
    const std::string trace = out(std::string(form) + ".trace");
    ASSERT_TRUE(import_flight_recorder({kData + "/" + form}, trace, {}).ok());
    auto stats = analysis::compute_trace_stats(trace);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    expect_frontier(stats->frontier);
    const nlohmann::json j = analysis::stats_json(*stats, {});
    EXPECT_EQ(j["hang_frontier"]["collectives"][0]["not_issued"], nlohmann::json::array({5}));
    EXPECT_NE(analysis::stats_table(*stats, {}).find("Hang frontier"), std::string::npos);
    auto report = analysis::validate_trace(trace, {});
    ASSERT_TRUE(report.ok()) << report.status().message();
    expect_frontier(report->frontier);
    EXPECT_FALSE(report->valid());
    ASSERT_FALSE(report->issues.empty());
    EXPECT_EQ(report->issues[0].message,
              "hang frontier: comm 0 (default_pg): collective #12 all_reduce (4194304 B) not "
              "completed by all: not issued by ranks 5; only scheduled on 3; started, not "
              "completed on 0,1,2,4,6,7");
  }
}

TEST_F(FlightRecorderImport, StopAtHangKeepsWhatEveryRankGotThrough) {
  // World collective #12 hung: rank 5 never issued it, rank 3 only scheduled it. #3-#11 (and the
  // groups' all-gathers and rank 0's send, all completed) stay; #12 goes on every rank.
  ImportOptions options;
  options.stop_at_hang = true;
  for (const char* form : {"fr_pickle", "fr_json"}) {
    SCOPED_TRACE(form);
    const std::string trace = out(std::string(form) + ".trace");
    auto report = import_flight_recorder({kData + "/" + form}, trace, options);
    ASSERT_TRUE(report.ok()) << report.status().message();
    const LoadedTrace l = load_trace(trace);
    std::map<uint32_t, std::vector<const v1::Op*>> by_rank;
    for (const v1::Op& op : l.ops) by_rank[op.rank()].push_back(&op);
    EXPECT_EQ(by_rank[0].size(), 9u + 2u + 1u);  // #3-#11, two all-gathers, the send
    EXPECT_EQ(by_rank[5].size(), 9u + 2u);
    EXPECT_EQ(by_rank[3].size(), 9u + 2u);
    for (const auto& [rank, ops] : by_rank) {
      for (size_t i = 0; i < ops.size(); ++i) {
        EXPECT_EQ(ops[i]->index(), i) << rank;
        EXPECT_EQ(ops[i]->state(), v1::OP_STATE_COMPLETED) << rank << " " << i;
        if (ops[i]->comm() == "0") {
          EXPECT_LE(ops[i]->op_count(), 11u);
        }
      }
    }
    const std::string& where = l.header.metadata().at("flight_recorder.stopped_at_hang");
    EXPECT_NE(where.find("comm 0 (default_pg): collective #12 all_reduce"), std::string::npos)
        << where;
    EXPECT_NE(where.find("not issued by ranks 5; only scheduled on 3; started, not completed on "
                         "0,1,2,4,6,7; it and the later ones left out"),
              std::string::npos)
        << where;
    ASSERT_FALSE(report->notes.empty());
    EXPECT_EQ(report->notes.back(), where);
    // What is left replays to the end: no frontier, and the ranks agree.
    auto stats = analysis::compute_trace_stats(trace);
    ASSERT_TRUE(stats.ok());
    EXPECT_FALSE(stats->frontier.hung());
    auto valid = analysis::validate_trace(trace, {});
    ASSERT_TRUE(valid.ok());
    EXPECT_TRUE(valid->valid()) << (valid->issues.empty() ? "" : valid->issues[0].message);
  }
}

TEST_F(FlightRecorderImport, StopAtHangKeepsTheCollectiveEveryRankStarted) {
  // Both ranks started #2 and neither completed it: the hang is inside it, so it stays.
  auto entry = [](int seq, const char* state) {
    return fmt::format(
        R"({{"record_id": {0}, "pg_id": 0, "process_group": ["0", "default_pg"],
            "collective_seq_id": {1}, "p2p_seq_id": 0, "profiling_name": "nccl:all_reduce",
            "time_created_ns": 5, "input_sizes": [[4]], "input_dtypes": ["Float"],
            "output_sizes": [[4]], "output_dtypes": ["Float"], "state": "{2}"}})",
        seq - 1, seq, state);
  };
  for (int r = 0; r < 2; ++r) {
    std::ofstream(dir_ / ("started_rank_" + std::to_string(r) + ".json"))
        << R"({"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg",
              "ranks": "[0, 1]"}}, "entries": [)"
        << entry(1, "completed") << "," << entry(2, "started") << "]}";
  }
  ImportOptions options;
  options.stop_at_hang = true;
  auto report = import_flight_recorder({out("started_rank_0.json"), out("started_rank_1.json")},
                                       out("s.trace"), options);
  ASSERT_TRUE(report.ok()) << report.status().message();
  const LoadedTrace l = load_trace(out("s.trace"));
  EXPECT_EQ(l.ops.size(), 4u);
  EXPECT_NE(l.header.metadata().at("flight_recorder.stopped_at_hang").find(
                "kept up to collective #2, which every rank started"),
            std::string::npos);
}

TEST_F(FlightRecorderImport, OpsOfACoalescingGroupTakeTheGroupsState) {
  // batch_isend_irecv on two ranks: the send and recv entries have no events of their own
  // (scheduled); the group's nccl:coalesced entry completed in 2.5 ms.
  auto p2p = [](int id, const std::string& name, const char* state, bool with_duration) {
    return fmt::format(
        R"({{"record_id": {0}, "pg_id": 0, "process_group": ["0", "default_pg"],
            "collective_seq_id": 0, "p2p_seq_id": 1, "profiling_name": "{1}",
            "time_created_ns": 5, "input_sizes": [[256]], "input_dtypes": ["Float"],
            "output_sizes": [[256]], "output_dtypes": ["Float"], "state": "{2}",
            "is_p2p": true{3}}})",
        id, name, state, with_duration ? R"(, "duration_ms": 2.5)" : "");
  };
  for (int r = 0; r < 2; ++r) {
    const int peer = 1 - r;
    std::ofstream(dir_ / ("batch_rank_" + std::to_string(r) + ".json"))
        << R"({"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg",
              "ranks": "[0, 1]"}}, "entries": [)"
        << p2p(0, fmt::format("nccl:send {}->{}", r, peer), "scheduled", false) << ","
        << p2p(1, fmt::format("nccl:recv {}<-{}", r, peer), "scheduled", false) << ","
        << p2p(2, "nccl:coalesced", "completed", true) << "]}";
  }
  const std::string trace = out("b.trace");
  auto report =
      import_flight_recorder({out("batch_rank_0.json"), out("batch_rank_1.json")}, trace, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->problems_total, 0u);
  const LoadedTrace l = load_trace(trace);
  ASSERT_EQ(l.ops.size(), 4u);
  for (const v1::Op& op : l.ops) {
    EXPECT_EQ(op.state(), v1::OP_STATE_COMPLETED) << op.label();
    EXPECT_EQ(op.measured_duration_ns(), 2'500'000u) << op.label();
  }
  EXPECT_EQ(l.header.metadata().count("flight_recorder.coalesced_ops"), 1u);
  // The job did not hang in the group.
  auto stats = analysis::compute_trace_stats(trace);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->frontier.point_to_point_total, 0u);
}

TEST_F(FlightRecorderImport, TheAssumedRootIsSaidOnce) {
  std::string entries;
  for (int seq = 1; seq <= 3; ++seq) {
    entries += fmt::format(
        R"({}{{"record_id": {}, "pg_id": 0, "process_group": ["0", "default_pg"],
            "collective_seq_id": {}, "p2p_seq_id": 0, "profiling_name": "nccl:broadcast",
            "time_created_ns": 5, "input_sizes": [[4]], "input_dtypes": ["Float"],
            "output_sizes": [[4]], "output_dtypes": ["Float"], "state": "completed"}})",
        seq == 1 ? "" : ",", seq - 1, seq);
  }
  std::ofstream(dir_ / "bcast_rank_0.json")
      << R"({"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg",
            "ranks": "[0]"}}, "entries": [)"
      << entries << "]}";
  auto report = import_flight_recorder({out("bcast_rank_0.json")}, out("r.trace"), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->notes.size(), 1u);
  EXPECT_NE(report->notes[0].find("3 broadcast/reduce/gather/scatter ops"), std::string::npos);
  EXPECT_EQ(load_trace(out("r.trace")).header.metadata().count("flight_recorder.root"), 1u);
}

TEST_F(FlightRecorderImport, AMissingDumpIsNamedAsSuch) {
  fs::create_directories(dir_ / "seven");
  for (int r = 0; r < 8; ++r) {
    if (r == 6) continue;
    const std::string name = "nccl_trace_rank_" + std::to_string(r) + ".json";
    fs::copy_file(kData + "/fr_json/" + name, dir_ / "seven" / name);
  }
  ASSERT_TRUE(import_flight_recorder({(dir_ / "seven").string()}, out("s.trace"), {}).ok());
  auto stats = analysis::compute_trace_stats(out("s.trace"));
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->frontier.collectives.size(), 1u);
  EXPECT_EQ(stats->frontier.collectives[0].no_record, (std::vector<uint32_t>{6}));
  EXPECT_EQ(stats->frontier.collectives[0].started, (std::vector<uint32_t>{0, 1, 2, 4, 7}));
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST_F(FlightRecorderImport, BadDumpsAreErrorsNamingFileAndField) {
  const std::string entry =
      R"({"record_id": 0, "pg_id": 0, "process_group": ["0", "default_pg"],
          "collective_seq_id": 1, "p2p_seq_id": 0, "profiling_name": "nccl:all_reduce",
          "time_created_ns": 5, "input_sizes": [[4]], "input_dtypes": ["Float"],
          "output_sizes": [[4]], "output_dtypes": ["Float"], "state": "completed"})";
  auto dump = [&](const std::string& e) {
    return R"({"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg",
              "ranks": "[0, 1]"}}, "entries": [)" + e + "]}";
  };
  write(dir_ / "ok_rank_0.json", dump(entry));
  ASSERT_TRUE(import_flight_recorder({out("ok_rank_0.json")}, out("ok.trace"), {}).ok());

  std::string negative = entry;
  negative.replace(negative.find("\"collective_seq_id\": 1"), 22, "\"collective_seq_id\": -1");
  write(dir_ / "neg_rank_0.json", dump(negative));
  auto r = import_flight_recorder({out("neg_rank_0.json")}, out("x.trace"), {});
  ASSERT_THAT(r, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(r.status().message().find("neg_rank_0.json: entries[0].collective_seq_id: negative"),
            std::string::npos)
      << r.status().message();

  std::string state = entry;
  state.replace(state.find("\"completed\""), 11, "\"finished\"");
  write(dir_ / "state_rank_0.json", dump(state));
  r = import_flight_recorder({out("state_rank_0.json")}, out("x.trace"), {});
  ASSERT_THAT(r, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(r.status().message().find("entries[0].state: 'finished' is not"), std::string::npos);

  write(dir_ / "norank.json", dump(entry));
  r = import_flight_recorder({out("norank.json")}, out("x.trace"), {});
  ASSERT_THAT(r, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(r.status().message().find("norank.json: cannot tell the rank"), std::string::npos);

  write(dir_ / "ranks_rank_0.json",
        R"({"version": "2.4", "pg_config": {"0": {"ranks": "[0, x]"}}, "entries": []})");
  r = import_flight_recorder({out("ranks_rank_0.json")}, out("x.trace"), {});
  ASSERT_THAT(r, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(r.status().message().find("pg_config[0].ranks: '[0, x]' is not a list of ranks"),
            std::string::npos)
      << r.status().message();

  // An unknown collective is a problem, skipped; strict makes it an error.
  std::string odd = entry;
  odd.replace(odd.find("nccl:all_reduce"), 15, "nccl:frobnicate");
  write(dir_ / "odd_rank_0.json", dump(odd));
  auto lenient = import_flight_recorder({out("odd_rank_0.json")}, out("x.trace"), {});
  ASSERT_TRUE(lenient.ok());
  EXPECT_EQ(lenient->problems_total, 1u);
  EXPECT_EQ(lenient->ops, 0u);
  ImportOptions strict;
  strict.strict = true;
  r = import_flight_recorder({out("odd_rank_0.json")}, out("x.trace"), strict);
  ASSERT_THAT(r, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(r.status().message().find("odd_rank_0.json:entries[0]: profiling_name "
                                      "'nccl:frobnicate'"),
            std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace collide::traces::flight_recorder
