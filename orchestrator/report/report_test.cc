#include "orchestrator/report/report.h"

#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "orchestrator/report/host_flow_control.h"
#include "orchestrator/report/html_report.h"
#include "orchestrator/report/roofline_table.h"
#include "orchestrator/report/text_summary.h"

namespace collide::orchestrator::report {
namespace {

// Four ranks doing `n` all-reduces of 1 MB one after the other, each taking `us` microseconds,
// with rank skew of 10 us at each start.
// A NIC as a replay reports it: the counters every test shares, the rest set by the test.
v1::NicTraffic nic_traffic(uint32_t host, uint32_t nic) {
  v1::NicTraffic n;
  n.set_host(host);
  n.set_nic(nic);
  n.set_tx_frames(10);
  n.set_tx_bytes(10240);
  n.set_rx_frames(9);
  n.set_packets_sent(8);
  return n;
}

v1::NicTraffic with_received(v1::NicTraffic n, uint64_t packets, uint64_t out_of_order) {
  n.set_packets_received(packets);
  n.set_out_of_order_packets(out_of_order);
  return n;
}

RunResult run(const std::string& variant, uint32_t rep, int n, double us) {
  RunResult r;
  r.variant = variant;
  r.repetition = rep;
  uint64_t t = 1'000'000;
  for (int k = 0; k < n; ++k) {
    for (uint32_t rank = 0; rank < 4; ++rank) {
      OpTiming op;
      op.rank = rank;
      op.op_index = static_cast<uint64_t>(k);
      op.kind = v1::OP_KIND_ALL_REDUCE;
      op.comm = "world";
      op.comm_size = 4;
      op.bytes = 1'000'000;
      op.datatype = v1::DATA_TYPE_BFLOAT16;
      op.reduce_op = v1::REDUCE_OP_SUM;
      op.iteration = static_cast<uint32_t>(k / 5);
      op.start_ns = t + rank * 10'000;
      op.end_ns = t + static_cast<uint64_t>(us * 1000);
      r.ops.push_back(op);
    }
    t += static_cast<uint64_t>(us * 1000);
  }
  r.packets_sent = 1000;
  return r;
}

TEST(ReportTest, CollectiveTimeSpansFirstStartToLastEnd) {
  const RunResult r = run("baseline", 0, 3, 100);
  const auto c = collective_times(r);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].ranks_seen, 4u);
  EXPECT_DOUBLE_EQ(c[0].seconds() * 1e6, 100.0);
  EXPECT_EQ(job_completion_ns(r), 300'000u);
  ASSERT_EQ(iteration_completion_ns(r).size(), 1u);
}

// A run interrupted part-way: the collectives every rank finished count in the size table like
// any other; the one only some ranks finished does not, and the run has no JCT.
TEST(ReportTest, AStoppedRunsFinishedCollectivesReachTheTables) {
  RunResult stopped = run("loss", 0, 3, 100);
  stopped.ops.pop_back();  // rank 3 never finished the third all-reduce
  stopped.failed = true;
  stopped.interrupted = true;
  stopped.failure = "collide run was interrupted by a signal";
  const Report report = build_report("stopped", {stopped});
  ASSERT_EQ(report.variants.size(), 1u);
  const VariantSummary& v = report.variants[0];
  EXPECT_EQ(v.failed_runs, 1u);
  EXPECT_TRUE(v.jct_seconds.empty());
  ASSERT_EQ(v.sizes.size(), 1u);
  EXPECT_EQ(v.sizes[0].count, 2u);
  EXPECT_DOUBLE_EQ(v.p50_us, 100.0);
}

FabricLink host_link(uint32_t host, uint32_t nic, uint64_t up, uint64_t down) {
  FabricLink l;
  l.name = "h" + std::to_string(host) + ".nic" + std::to_string(nic) + "-leaf" + std::to_string(nic);
  l.host_link = true;
  l.leaf = nic;
  l.rail = nic;
  l.lower_end = {up, up / 1000, down, down / 1000};
  l.upper_end = {down, down / 1000, up, up / 1000};
  return l;
}

FabricLink uplink(uint32_t leaf, uint32_t spine, uint64_t up, uint64_t down) {
  FabricLink l;
  l.name = "leaf" + std::to_string(leaf) + "-spine" + std::to_string(spine);
  l.leaf = leaf;
  l.rail = leaf;
  l.spine = spine;
  l.lower_end = {up, 1, down, 1};
  l.upper_end = {down, 1, up, 1};
  return l;
}

TEST(ReportTest, FabricTotalsPerLeafRailAndSpineOverRepetitions) {
  RunResult a = run("baseline", 0, 1, 100);
  a.fabric_links = {host_link(0, 0, 5000, 1000), host_link(1, 0, 1000, 5000), host_link(0, 1, 700, 0),
                    uplink(0, 0, 10, 20), uplink(1, 0, 0, 0), uplink(0, 1, 30, 40)};
  RunResult b = run("baseline", 1, 1, 100);
  b.fabric_links = {host_link(0, 0, 1, 2)};
  b.nics = {nic_traffic(1, 2)};
  b.nics[0].set_retransmitted_packets(3);
  const Report rep = build_report("unit", {a, b});
  const FabricTotals& first = rep.variants[0].repetitions[0].fabric;
  ASSERT_EQ(first.leaves.size(), 2u);
  EXPECT_EQ(first.leaves[0].name, "leaf0");
  EXPECT_EQ(first.leaves[0].bytes_from_below, 6000u);  // what the leaf's host ports received
  EXPECT_EQ(first.leaves[0].bytes_to_below, 6000u);
  EXPECT_EQ(first.leaves[0].bytes_to_above, 40u);
  EXPECT_EQ(first.leaves[0].bytes_from_above, 60u);
  EXPECT_EQ(first.leaves[1].rail, 1u);
  EXPECT_EQ(first.leaves[1].bytes_from_below, 700u);
  ASSERT_EQ(first.spines.size(), 2u);
  EXPECT_EQ(first.spines[0].bytes_from_below, 10u);
  EXPECT_EQ(first.spines[1].bytes_to_below, 40u);
  EXPECT_EQ(first.spine_bytes(), 40u);
  // The variant sums its repetitions.
  EXPECT_EQ(rep.variants[0].fabric.leaves[0].bytes_from_below, 6001u);
  EXPECT_EQ(rep.variants[0].fabric.spine_bytes(), 40u);

  const nlohmann::json j = report_json(rep);
  EXPECT_EQ(j["variants"][0]["fabric"]["leaves"][0]["bytes_from_below"], "6001");
  EXPECT_EQ(j["variants"][0]["fabric"]["spine_bytes"], "40");
  EXPECT_EQ(j["variants"][0]["repetitions"][0]["fabric_links"][0]["name"], "h0.nic0-leaf0");
  EXPECT_EQ(j["variants"][0]["repetitions"][0]["fabric_links"][0]["lower"]["tx_bytes"], "5000");
  EXPECT_EQ(j["variants"][0]["repetitions"][1]["nics"][0]["nic"], 2);
  EXPECT_EQ(j["variants"][0]["repetitions"][1]["nics"][0]["retransmitted_packets"], "3");
  const std::string text = fabric_table(rep);
  EXPECT_NE(text.find("leaf1"), std::string::npos) << text;
  EXPECT_NE(text.find("6001"), std::string::npos) << text;
  // No testbed counters, no table.
  EXPECT_EQ(fabric_table(build_report("unit", {run("baseline", 0, 1, 100)})), "");
  // The HTML draws the repetition whose uplinks were the most uneven: the first (the second
  // crossed no spine).
  const std::string html = render_html(rep, {a, b});
  EXPECT_NE(html.find("<h3>baseline (repetition 0: leaf uplinks max/mean"), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"topology-baseline\""), std::string::npos);
  EXPECT_EQ(render_html(build_report("unit", {run("baseline", 0, 1, 100)}), {}).find("class=\"topology\""),
            std::string::npos);
}

TEST(ReportTest, FramesAHostsFullReceiveRingCostAreCountedApartFromTheFabric) {
  RunResult a = run("baseline", 0, 1, 100);
  a.fabric_links = {host_link(0, 0, 5000, 1000), host_link(1, 0, 1000, 5000), uplink(0, 0, 10, 20)};
  a.fabric_links[1].upper_end.tx_dropped = 7;  // leaf0's port towards host 1: host 1's ring was full
  a.fabric_links[2].lower_end.tx_dropped = 100;  // an uplink's drops are the fabric's, not a host's
  RunResult b = run("baseline", 1, 1, 100);
  b.fabric_links = {host_link(0, 0, 1, 2)};
  b.fabric_links[0].upper_end.tx_dropped = 2;
  const Report rep = build_report("unit", {a, b});
  EXPECT_EQ(rep.variants[0].repetitions[0].fabric.host_ring_drops(), 7u);
  EXPECT_EQ(rep.variants[0].fabric.host_ring_drops(), 9u);
  const nlohmann::json j = report_json(rep);
  EXPECT_EQ(j["variants"][0]["fabric"]["leaves"][0]["host_ring_drops"], "9");
  EXPECT_EQ(j["variants"][0]["repetitions"][0]["fabric_links"][1]["upper"]["tx_dropped"], "7");
  const std::string text = fabric_table(rep);
  EXPECT_NE(text.find("baseline: 9 frames dropped by leaf ports because a host's receive ring was full"),
            std::string::npos)
      << text;
  // None dropped, nothing said.
  RunResult quiet = run("baseline", 0, 1, 100);
  quiet.fabric_links = {host_link(0, 0, 5000, 1000)};
  EXPECT_EQ(fabric_table(build_report("unit", {quiet})).find("receive ring"), std::string::npos);
}

TEST(ReportTest, JctPerIteration) {
  // Ten all-reduces of 100 us, five per iteration: each iteration spans 500 us.
  const Report rep = build_report("unit", {run("baseline", 0, 10, 100)});
  ASSERT_EQ(rep.variants[0].repetitions.size(), 1u);
  const auto& its = rep.variants[0].repetitions[0].iteration_seconds;
  ASSERT_EQ(its.size(), 2u);
  EXPECT_NEAR(its[0], 500e-6, 1e-12);
  EXPECT_NEAR(its[1], 500e-6, 1e-12);
}

TEST(ReportTest, JctAgainstTheRooflineOfTheVariantsFabric) {
  // Ten all-reduces of 100 us: a JCT of 1 ms against a roofline of 0.25 ms.
  std::vector<RunResult> runs = {run("baseline", 0, 10, 100), run("baseline", 1, 10, 100), run("unshaped", 0, 10, 100)};
  runs[0].roofline = runs[1].roofline = {250e-6, "leaf0 uplinks", 312'500, 10};
  const Report rep = build_report("unit", runs);
  EXPECT_NEAR(rep.variants[0].jct_roofline_ratio, 4.0, 1e-9);
  EXPECT_EQ(rep.variants[1].jct_roofline_ratio, 0);  // no roofline: no ratio
  const v1::Results out = to_results(rep);
  ASSERT_TRUE(out.variants(0).has_roofline());
  EXPECT_EQ(out.variants(0).roofline().bottleneck(), "leaf0 uplinks");
  EXPECT_NEAR(out.variants(0).roofline().jct_ratio(), 4.0, 1e-9);
  EXPECT_FALSE(out.variants(1).has_roofline());
  const std::string text = run_summary(rep, "", "");
  EXPECT_NE(text.find("JCT against the roofline"), std::string::npos) << text;
  EXPECT_NE(text.find("4.00  leaf0 uplinks (0.3 MB at 10 Gb/s)"), std::string::npos) << text;
  EXPECT_EQ(roofline_table(rep).find("unshaped"), std::string::npos);
}

TEST(ReportTest, JsonFollowsTheResultsSchema) {
  std::vector<RunResult> runs = {run("baseline", 0, 10, 100), run("baseline", 1, 10, 104),
                                 run("lossy", 0, 10, 200), run("lossy", 1, 10, 210)};
  runs[2].retransmitted_packets = 5'000'000'000;  // beyond 32 bits, as long soaks get
  runs[2].faults.push_back({"lossy-h1", "loss", 1'100'000, 1'900'000, 5000, 50});
  const Report rep = build_report("unit", runs);
  const std::string json = results_json(rep);
  // Strict parsing: any field the schema does not know is an error.
  v1::Results parsed;
  google::protobuf::util::JsonParseOptions strict;
  strict.ignore_unknown_fields = false;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed, strict).ok()) << json;
  ASSERT_EQ(parsed.variants_size(), 2);
  const v1::VariantResults& lossy = parsed.variants(1);
  EXPECT_EQ(lossy.name(), "lossy");
  EXPECT_EQ(lossy.retransmitted_packets(), 5'000'000'000u);
  EXPECT_NEAR(lossy.slowdown_mean(), 2.008, 0.01);
  ASSERT_EQ(lossy.slowdown_ci95_size(), 2);
  EXPECT_LT(lossy.slowdown_ci95(0), lossy.slowdown_mean());
  ASSERT_EQ(lossy.sizes_size(), 1);
  EXPECT_EQ(lossy.sizes(0).kind(), "all_reduce");
  EXPECT_EQ(lossy.sizes(0).type(), "bfloat16");
  EXPECT_EQ(lossy.sizes(0).redop(), "sum");
  EXPECT_EQ(lossy.sizes(0).elements(), 500'000u);
  EXPECT_EQ(lossy.sizes(0).count(), 20u);
  ASSERT_EQ(lossy.repetitions_size(), 2);
  EXPECT_EQ(lossy.repetitions(0).iteration_seconds_size(), 2);
  ASSERT_EQ(lossy.repetitions(0).fault_windows_size(), 1);
  // On the run's own time base: the first op started at 1 ms.
  EXPECT_EQ(lossy.repetitions(0).fault_windows(0).start_ns(), 100'000u);
  EXPECT_EQ(lossy.faults(0).packets_acted(), 50u);
  // Zeros are written too: a reader can tell "no retransmissions" from "not measured".
  EXPECT_NE(json.find("\"timeouts\": \"0\""), std::string::npos) << json;
  // And it is the same document report_json() hands to code.
  EXPECT_EQ(report_json(rep)["variants"][0]["name"], "baseline");
}

// A 200 ms flap in the middle of a 1 s run: the timeline shades 200 ms of it, where it held, and
// the results give that window; a fault that never held is not drawn at all.
TEST(ReportTest, FaultWindowsAreShadedAsMeasuredNotAsTheRun) {
  RunResult r = run("flap", 0, 10, 100'000);  // 10 ops of 100 ms from t = 1 ms: 1 s
  const uint64_t t0 = 1'000'000;
  r.faults.push_back({"flap-h1", "link-flap", t0 + 400'000'000, t0 + 600'000'000, 0, 0});
  r.faults.push_back({"late-loss", "loss", 0, 0, 0, 0});
  const std::vector<RunResult> runs = {r};
  const Report rep = build_report("windows", runs);
  v1::Results parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(results_json(rep), &parsed).ok());
  const auto& w = parsed.variants(0).repetitions(0).fault_windows(0);
  EXPECT_EQ(w.start_ns(), 400'000'000u);
  EXPECT_EQ(w.end_ns() - w.start_ns(), 200'000'000u);

  const std::string html = render_html(rep, runs);
  std::vector<double> widths;
  for (size_t at = html.find("<rect class=\"fault\""); at != std::string::npos;
       at = html.find("<rect class=\"fault\"", at + 1)) {
    const size_t w_at = html.find("width=\"", at) + 7;
    widths.push_back(std::stod(html.substr(w_at)));
  }
  ASSERT_EQ(widths.size(), 1u) << "only the fault that held is drawn";
  // The timeline's axis is 680 units wide (760 - 60 - 20) for the run's 1 s.
  EXPECT_NEAR(widths[0], 680 * 0.2, 1.0);
  EXPECT_NE(html.find("flap-h1 (link-flap): 200.0 ms from 400.0 ms"), std::string::npos);
}

TEST(ReportTest, ProductionTimesStandBesideTheReplays) {
  // The trace measured each all-reduce at 400 us on its slowest rank (NCCL Inspector, Flight
  // Recorder): the replays take 500 us.
  std::vector<RunResult> runs = {run("baseline", 0, 10, 500.0), run("baseline", 1, 10, 500.0)};
  for (RunResult& r : runs) {
    for (OpTiming& op : r.ops) op.production_ns = op.rank == 2 ? 400'000 : 350'000;
  }
  const Report report = build_report("s", runs);
  ASSERT_EQ(report.variants.size(), 1u);
  const VariantSummary& v = report.variants[0];
  ASSERT_EQ(v.production.size(), 1u);
  EXPECT_EQ(v.production[0].kind, v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(v.production[0].count, 20u);
  EXPECT_DOUBLE_EQ(v.production[0].production_p50_us, 400.0);
  EXPECT_DOUBLE_EQ(v.production[0].production_p99_us, 400.0);
  EXPECT_DOUBLE_EQ(v.production[0].replay_p50_us, 500.0);
  const std::string table = production_table(v);
  EXPECT_NE(table.find("production (as the trace measured it) vs replay"), std::string::npos);
  EXPECT_NE(table.find("all_reduce"), std::string::npos);
  EXPECT_NE(table.find("1.25"), std::string::npos) << table;  // replay p50 / production p50
  EXPECT_NE(run_summary(report, "", "").find(table), std::string::npos);
  EXPECT_NE(render_html(report, runs).find("production (as the trace measured it)"),
            std::string::npos);
  // A trace without production times shows no such table.
  const Report plain = build_report("s", {run("baseline", 0, 10, 500.0)});
  EXPECT_TRUE(plain.variants[0].production.empty());
  EXPECT_EQ(run_summary(plain, "", "").find("production"), std::string::npos);
}

TEST(ReportTest, RunSummaryHasBothTablesAndThePaths) {
  std::vector<RunResult> runs = {run("baseline", 0, 10, 100), run("baseline", 1, 10, 102),
                                 run("lossy", 0, 10, 150), run("lossy", 1, 10, 160)};
  runs[2].retransmitted_packets = 1234;
  const std::string text = run_summary(build_report("unit", runs), "out/report.html", "out/report.json");
  // nccl-tests columns: size 2(n-1)/n... S is the buffer, 500000 bf16 elements, sum.
  EXPECT_NE(text.find("size(B)"), std::string::npos) << text;
  EXPECT_NE(text.find("1000000       500000  bfloat16    sum      all_reduce"), std::string::npos) << text;
  EXPECT_NE(text.find("slowdown (95% CI)"), std::string::npos);
  EXPECT_NE(text.find("1.53x"), std::string::npos) << text;
  EXPECT_NE(text.find("1234"), std::string::npos);
  EXPECT_NE(text.find("JCT per iteration"), std::string::npos);
  EXPECT_NE(text.find("report: out/report.html\n        out/report.json\n"), std::string::npos) << text;
}

TEST(ReportTest, SlowdownAgainstBaselineWithConfidenceInterval) {
  std::vector<RunResult> runs;
  for (uint32_t rep = 0; rep < 3; ++rep) {
    runs.push_back(run("baseline", rep, 10, 100 + rep));
    runs.push_back(run("lossy", rep, 10, 150 + 2 * rep));
  }
  RunResult failed = run("lossy", 3, 1, 1);
  failed.failed = true;
  failed.failure = "NET/IB: ... IBV_WC_RETRY_EXC_ERR";
  runs.push_back(failed);

  const Report rep = build_report("unit", runs);
  ASSERT_EQ(rep.variants.size(), 2u);
  EXPECT_EQ(rep.variants[0].name, "baseline");
  const VariantSummary& lossy = rep.variants[1];
  EXPECT_EQ(lossy.runs, 4u);
  EXPECT_EQ(lossy.failed_runs, 1u);
  EXPECT_NEAR(lossy.slowdown.mean, 1.5, 0.03);
  EXPECT_LT(lossy.slowdown.low, lossy.slowdown.mean);
  EXPECT_GT(lossy.slowdown.high, lossy.slowdown.mean);
  EXPECT_NEAR(rep.variants[0].slowdown.mean, 1.0, 1e-9);
  EXPECT_NEAR(lossy.p50_us, 152, 1e-9);
  EXPECT_EQ(lossy.collective_us.size(), 30u);
  // nccl-tests: 1 MB all-reduce in 152 us is 6.58 GB/s algbw, x 2(n-1)/n = 1.5 busbw.
  ASSERT_EQ(lossy.sizes.size(), 1u);
  EXPECT_NEAR(lossy.sizes[0].algbw_gbytes, 1e6 / 152e3, 1e-6);
  EXPECT_NEAR(lossy.sizes[0].busbw_gbytes, 1.5 * 1e6 / 152e3, 1e-6);
  const auto j = report_json(rep);
  EXPECT_EQ(j["variants"][1]["failed_runs"], 1);
  EXPECT_NE(size_table(lossy).find("all_reduce"), std::string::npos);
}

TEST(ReportTest, HtmlIsSelfContainedWithChartsAndFaultWindows) {
  std::vector<RunResult> runs = {run("baseline", 0, 5, 100), run("lossy", 0, 5, 120)};
  runs[1].faults.push_back({"lossy-h1", "loss", 1'100'000, 1'300'000, 5000, 50});
  const Report rep = build_report("demo <&>", runs);
  const std::string html = render_html(rep, runs);
  EXPECT_NE(html.find("<svg class=\"chart\" id=\"cdf\""), std::string::npos);
  EXPECT_NE(html.find("id=\"timeline-lossy\""), std::string::npos);
  EXPECT_NE(html.find("class=\"fault\""), std::string::npos);
  EXPECT_NE(html.find("demo &lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
}

TEST(ReportTest, EachNicsCongestionNotificationCountsReachTheJson) {
  RunResult a = run("dcqcn", 0, 1, 100);
  a.nics = {with_received(nic_traffic(0, 0), 600, 30), nic_traffic(1, 0)};
  a.nics[0].set_ecn_marked_packets(40);
  a.nics[0].set_cnps_sent(7);
  a.nics[1].set_cnps_received(7);
  const nlohmann::json j = report_json(build_report("unit", {a}));
  const auto& nics = j["variants"][0]["repetitions"][0]["nics"];
  EXPECT_EQ(nics[0]["ecn_marked_packets"], "40");
  EXPECT_EQ(nics[0]["cnps_sent"], "7");
  EXPECT_EQ(nics[1]["cnps_received"], "7");
}

// A lossless run: host NICs that paused their leaf ports, and NICs those pauses held, show in
// the text and HTML summaries with their sums over NICs and repetitions; a run without any
// flow control shows no such table.
TEST(ReportTest, HostFlowControlSumsThePauseFramesOfEveryNic) {
  RunResult a = run("lossless", 0, 1, 100);
  a.nics = {nic_traffic(0, 0), nic_traffic(1, 0)};
  a.nics[0].set_pause_frames_sent(40);  // the slow receiver: 39 pauses and a resume
  a.nics[1].set_pause_frames(40);       // its sender, held
  a.nics[1].set_paused_ns(1'500'000);
  RunResult b = run("lossless", 1, 1, 100);
  b.nics = {nic_traffic(0, 0)};
  b.nics[0].set_pause_frames_sent(2);
  RunResult quiet = run("baseline", 0, 1, 100);
  quiet.nics = {nic_traffic(0, 0)};
  const Report rep = build_report("unit", {quiet, a, b});
  const auto rows = host_flow_control_rows(rep);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].variant, "lossless");
  EXPECT_EQ(rows[0].pause_frames, 40u);
  EXPECT_DOUBLE_EQ(rows[0].paused_ms, 1.5);
  EXPECT_EQ(rows[0].pause_frames_sent, 42u);

  const nlohmann::json j = report_json(rep);
  EXPECT_EQ(j["variants"][1]["repetitions"][0]["nics"][0]["pause_frames_sent"], "40");
  const std::string text = run_summary(rep, "", "");
  EXPECT_NE(text.find("Host NIC flow control (PFC)"), std::string::npos) << text;
  EXPECT_NE(text.find("lossless                         40 received, held 1.500 ms, 42 sent"),
            std::string::npos)
      << text;
  const std::string html = render_html(rep, {quiet, a, b});
  EXPECT_NE(html.find("<table id=\"host-flow-control\">"), std::string::npos);
  EXPECT_NE(html.find("<td>40</td><td>1.500</td><td>42</td>"), std::string::npos);

  const Report plain = build_report("unit", {quiet});
  EXPECT_EQ(run_summary(plain, "", "").find("Host NIC flow control"), std::string::npos);
  EXPECT_EQ(render_html(plain, {quiet}).find("host-flow-control"), std::string::npos);
}

// A slow receiver on a lossy fabric sends no pause: what its NIC's full buffer dropped is the row.
TEST(ReportTest, HostFlowControlCountsWhatFullNicBuffersDropped) {
  RunResult a = run("lossy-slow", 0, 1, 100);
  a.nics = {nic_traffic(0, 0), nic_traffic(1, 0)};
  a.nics[0].set_rx_buffer_dropped(120);
  RunResult b = run("lossy-slow", 1, 1, 100);
  b.nics = {nic_traffic(0, 0)};
  b.nics[0].set_rx_buffer_dropped(30);
  const Report rep = build_report("unit", {a, b});
  const auto rows = host_flow_control_rows(rep);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].pause_frames_sent, 0u);
  EXPECT_EQ(rows[0].buffer_dropped, 150u);
  EXPECT_EQ(report_json(rep)["variants"][0]["repetitions"][0]["nics"][0]["rx_buffer_dropped"], "120");
  const std::string text = run_summary(rep, "", "");
  EXPECT_NE(text.find("lossy-slow                        0 received, held 0.000 ms, 0 sent, 150 dropped"),
            std::string::npos)
      << text;
  EXPECT_NE(render_html(rep, {a, b}).find("<td>0</td><td>0.000</td><td>0</td><td>150</td>"), std::string::npos);
}

TEST(ReportTest, OutOfOrderRateSumsTheNicsOfEveryRepetition) {
  RunResult a = run("spray", 0, 1, 100);
  a.nics = {with_received(nic_traffic(0, 0), 600, 30), with_received(nic_traffic(1, 0), 400, 20)};
  RunResult b = run("spray", 1, 1, 100);
  b.nics = {with_received(nic_traffic(0, 0), 1000, 50)};
  RunResult quiet = run("baseline", 0, 1, 100);  // its NICs counted nothing: no row
  const Report rep = build_report("unit", {quiet, a, b});
  const VariantSummary& spray = rep.variants[1];
  EXPECT_EQ(spray.packets_received, 2000u);
  EXPECT_EQ(spray.out_of_order_packets, 100u);
  EXPECT_DOUBLE_EQ(spray.out_of_order_rate(), 0.05);

  const nlohmann::json j = report_json(rep);
  EXPECT_EQ(j["variants"][1]["out_of_order_packets"], "100");
  EXPECT_DOUBLE_EQ(j["variants"][1]["out_of_order_rate"].get<double>(), 0.05);
  EXPECT_EQ(j["variants"][1]["repetitions"][0]["nics"][1]["out_of_order_packets"], "20");

  const std::string text = run_summary(rep, "", "");
  EXPECT_NE(text.find("Out-of-order rate"), std::string::npos) << text;
  EXPECT_NE(text.find("spray                         5.00% (100 of 2000 packets)"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("baseline                       0.00%"), std::string::npos) << text;
  const std::string html = render_html(rep, {quiet, a, b});
  EXPECT_NE(html.find("<td class=\"name\">spray</td><td>5.00%</td><td>100</td><td>2000</td>"),
            std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::report

namespace collide::orchestrator::report {
namespace {

// A soak's report, built run by run within limits, says what the whole report says of every run:
// the counters of the runs past its detailed ones add up, its completion-time quantiles stream
// within 1% of the exact ones, and only the detailed repetitions are listed.
TEST(ReportTest, ASoaksReportWithinItsLimitsAddsUpEveryRun) {
  std::vector<RunResult> runs;
  for (uint32_t rep = 0; rep < 30; ++rep) {
    RunResult r = run("loss", rep, 20, 100 + 7.0 * rep);  // each repetition slower than the last
    r.nics = {nic_traffic(0, 0)};
    r.nics[0].set_pause_frames(rep);
    PortStats port;
    port.link = "leaf0-spine0";
    port.end = "leaf0";
    port.bytes = 1000;
    port.drops = rep;
    r.ports = {port};
    r.faults = {{"flap#1", "link-flap", 1'100'000, 1'200'000, 5, 1}};
    if (rep % 10 == 9) {
      r.failed = true;
      r.failure = "host 1: retry count exceeded";
    }
    runs.push_back(std::move(r));
  }
  const Report whole = build_report("soak", runs);
  ReportBuilder builder("soak", ReportLimits{.detailed_repetitions = 4, .collective_times = 100, .failures = 2});
  for (const RunResult& r : runs) builder.add(r);
  const Report limited = std::move(builder).finish();

  ASSERT_EQ(limited.variants.size(), 1u);
  const VariantSummary& a = whole.variants[0];
  const VariantSummary& b = limited.variants[0];
  EXPECT_EQ(b.runs, 30u);
  EXPECT_EQ(b.failed_runs, 3u);
  EXPECT_EQ(b.jct_seconds, a.jct_seconds);
  EXPECT_DOUBLE_EQ(b.jct.mean, a.jct.mean);
  EXPECT_EQ(b.nic_pause_frames, a.nic_pause_frames);
  EXPECT_EQ(b.nic_pause_frames, 435u);  // 0 + 1 + ... + 29
  ASSERT_EQ(b.ports.size(), 1u);
  EXPECT_EQ(b.ports[0].drops, a.ports[0].drops);
  ASSERT_EQ(b.faults.size(), 1u);
  EXPECT_EQ(b.faults[0].name, "flap") << "occurrences add up under the fault's own name";
  EXPECT_EQ(b.faults[0].packets_acted, 30u);
  // Two failures spelled out, the third counted.
  ASSERT_EQ(b.failures.size(), 3u);
  EXPECT_NE(b.failures[2].find("1 more failed runs"), std::string::npos) << b.failures[2];

  // 540 collectives measured (27 completed runs of 20), past the 100 kept exactly.
  EXPECT_EQ(b.collective_count, a.collective_count);
  EXPECT_EQ(a.collective_count, 540u);
  for (auto [exact, streamed] : {std::pair{a.p50_us, b.p50_us}, {a.p99_us, b.p99_us}, {a.p999_us, b.p999_us}}) {
    EXPECT_NEAR(streamed / exact, 1.0, 0.011) << exact << " vs " << streamed;
  }
  EXPECT_DOUBLE_EQ(b.max_us, a.max_us);
  ASSERT_EQ(b.sizes.size(), 1u);
  EXPECT_EQ(b.sizes[0].count, a.sizes[0].count);
  EXPECT_NEAR(b.sizes[0].p99_us / a.sizes[0].p99_us, 1.0, 0.011);
  EXPECT_EQ(b.collective_us.size(), 1000u) << "the CDF's points";

  // The 4 detailed repetitions are listed; the runs past them are in the totals above.
  ASSERT_EQ(b.repetitions.size(), 4u);
  EXPECT_FALSE(b.repetitions[3].collective_samples.empty());
  EXPECT_EQ(b.repetitions[3].ports.size(), 1u);
  EXPECT_EQ(b.repetitions[3].nics.size(), 1u);
  ASSERT_EQ(b.repetitions[3].faults.size(), 1u);
  EXPECT_EQ(b.repetitions[3].faults[0].name, "flap#1");
  // The whole report, without limits, is what build_report always gave.
  EXPECT_EQ(a.collective_us.size(), 540u);
  EXPECT_FALSE(a.repetitions[28].collective_samples.empty());
}

}  // namespace
}  // namespace collide::orchestrator::report
