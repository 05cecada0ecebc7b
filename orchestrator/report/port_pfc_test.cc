#include "orchestrator/report/port_pfc.h"

#include <gtest/gtest.h>

#include "orchestrator/report/html_report.h"
#include "orchestrator/report/report.h"
#include "orchestrator/report/text_summary.h"

namespace collide::orchestrator::report {
namespace {

PortStats lossless_port(const std::string& link, const std::string& end, uint64_t pauses_in, uint64_t paused_ns,
                        uint64_t pauses_out) {
  PortStats p;
  p.link = link;
  p.end = end;
  p.tier = "leaf_down";
  p.gbps = 1;
  p.packets = 100;
  p.lossless = true;
  p.pfc_priority = 3;
  p.pause_frames = pauses_in;
  p.paused_ns = paused_ns;
  p.pause_frames_sent = pauses_out;
  return p;
}

TEST(PortPfcTest, PausesPerPortOverRepetitionsInJsonTextAndHtml) {
  RunResult a;
  a.variant = "lossless";
  a.ports = {lossless_port("h0.nic0-leaf0", "leaf0", 10, 5'000'000, 0),
             lossless_port("leaf0-spine0", "spine0", 4, 1'000'000, 2),
             lossless_port("h1.nic0-leaf0", "leaf0", 0, 0, 0)};
  a.ports[0].watchdog_events = {{1'000'000, 11'000'000, 211'000'000}};
  RunResult b = a;
  b.repetition = 1;
  b.ports[0].watchdog_events = {{2'000'000, 12'000'000, 0}};
  const Report rep = build_report("unit", {a, b});
  const PortStats& slow = rep.variants[0].ports[0];
  EXPECT_EQ(slow.pause_frames, 20u);
  EXPECT_EQ(slow.paused_ns, 10'000'000u);
  ASSERT_EQ(slow.watchdog_events.size(), 2u);

  const nlohmann::json port = report_json(rep)["variants"][0]["ports"][0];
  EXPECT_EQ(port["pause_frames"], "20");
  EXPECT_EQ(port["paused_ns"], "10000000");
  EXPECT_EQ(port["pfc_priority"], 3);
  EXPECT_EQ(port["watchdog_events"].size(), 2u);

  const std::string text = run_summary(rep, "", "");
  EXPECT_NE(text.find("Priority flow control"), std::string::npos) << text;
  EXPECT_NE(text.find("2: held 10.0 ms before detection, restored after 200.0 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("pauses held 2 of 3 switch ports"), std::string::npos) << text;
  const std::string pfc = text.substr(text.find("Priority flow control"));
  EXPECT_EQ(pfc.find("h1.nic0-leaf0"), std::string::npos) << "an idle port is not listed: " << pfc;
  const std::string html = render_html(rep, {a, b});
  EXPECT_NE(html.find("<h2>Priority flow control</h2>"), std::string::npos);
  EXPECT_NE(html.find("<th>pause_frames</th>"), std::string::npos);

  EXPECT_NE(text.find("deadlocked"), std::string::npos) << text;
  EXPECT_EQ(text.find("a PFC deadlock"), std::string::npos) << "no port was in a cycle: " << text;

  // Ports found in a cycle of paused queues: counted over repetitions and named a deadlock.
  a.ports[1].deadlocks = 1;
  a.ports[1].deadlocked_ns = 300'000'000;
  b.ports[1].deadlocks = 2;
  b.ports[1].deadlocked_ns = 100'500'000;
  const Report locked = build_report("unit", {a, b});
  EXPECT_EQ(locked.variants[0].ports[1].deadlocks, 3u);
  const nlohmann::json locked_port = report_json(locked)["variants"][0]["ports"][1];
  EXPECT_EQ(locked_port["deadlocks"], "3");
  EXPECT_EQ(locked_port["deadlocked_ns"], "400500000");
  const std::string locked_text = run_summary(locked, "", "");
  EXPECT_NE(locked_text.find("3: 400.5 ms"), std::string::npos) << locked_text;
  EXPECT_NE(locked_text.find("pauses held 2 of 3 switch ports; 1 in a cycle of paused queues each waiting on the next "
                             "(a PFC deadlock)"),
            std::string::npos)
      << locked_text;
  EXPECT_NE(render_html(locked, {a, b}).find("<td>3: 400.5 ms</td>"), std::string::npos);

  // A lossy fabric has no PFC section.
  for (RunResult* r : {&a, &b}) {
    for (PortStats& p : r->ports) p.lossless = false;
  }
  EXPECT_EQ(run_summary(build_report("unit", {a, b}), "", "").find("Priority flow control"), std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::report
