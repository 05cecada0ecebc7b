// `collide run --metrics 127.0.0.1:0` on 2 virtual hosts, a baseline and a lossy variant, three
// repetitions each, scraped every 50 ms while it runs: the URL it prints names the port bound,
// HEAD and GET answer, and no counter ever goes down across repetitions and variants. Needs root
// (namespaces, BPF, AF_XDP).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"
#include "common/process.h"
#include "tests/support/collide_run_dir.h"
#include "tests/support/privileged.h"

namespace collide {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::string scenario_text(const std::string& bed) {
  return fmt::format(R"(name: live-metrics
testbed:
  virtual: {{name: {}, hosts: 2, leaves: 1}}
  ranks_per_host: 1
  port: af_xdp
workload:
  collectives: {{kind: all-reduce, bytes: 256KiB, count: 24}}
transport: {{mtu_bytes: 1024, recovery: go-back-n, timeout_exponent: 14}}
faults:
  - {{name: lossy, kind: loss, link: h1, direction: to-host, probability: 1%, seed: 5, roce_only: true}}
runs: {{baseline: true, repetitions: 3, seed: 1, variants: [{{name: loss, faults: [lossy]}}]}}
)",
                     bed);
}

// The whole answer to one request (the endpoint closes the connection); empty when it is gone.
std::string http(uint16_t port, const std::string& method) {
  asio::io_context io;
  tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return "";
  asio::write(socket, asio::buffer(method + " /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n"), ec);
  std::string response;
  asio::read(socket, asio::dynamic_buffer(response), ec);
  return response;
}

struct Scrape {
  std::map<std::string, double> sums;          // each counter family summed over its series
  std::set<std::string> repetitions;           // variant=repetition pairs the gauge showed
};

Scrape parse(const std::string& body) {
  static const std::regex sample(R"re(^(collide_[a-z_]+_total)(\{[^}]*\})? ([0-9.e+]+)$)re");
  static const std::regex repetition(R"re(^collide_repetition\{variant="([^"]*)"\} ([0-9]+)$)re");
  Scrape s;
  std::istringstream in(body);
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_match(line, m, sample)) s.sums[m[1].str()] += std::stod(m[3].str());
    if (std::regex_match(line, m, repetition)) s.repetitions.insert(m[1].str() + "=" + m[2].str());
  }
  return s;
}

class MetricsRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COLLIDE_REQUIRE(testing::missing_for_collide_run());
    run_dir_.emplace("mt", "collide-metrics");
  }
  void TearDown() override { run_dir_.reset(); }
  std::optional<testing::CollideRunDir> run_dir_;
};

TEST_F(MetricsRunTest, CountersNeverGoDownAcrossRepetitionsAndVariants) {
  const auto scenario = run_dir_->dir() / "live-metrics.yaml";
  std::ofstream(scenario) << scenario_text(run_dir_->bed());
  const auto out = run_dir_->dir() / "results";
  // stderr (where the URL is printed) into the pipe read here.
  auto child = process::ChildProcess::spawn({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", COLLIDE_BIN, "run",
                                             scenario.string(), "--output", out.string(), "--metrics",
                                             "127.0.0.1:0"});
  ASSERT_TRUE(child.ok()) << child.status().to_string();

  static const std::regex url(R"(collide run: metrics at http://127\.0\.0\.1:([0-9]+)/metrics)");
  std::string log;
  std::optional<uint16_t> port;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!port && std::chrono::steady_clock::now() < deadline) {
    auto line = child->read_line(std::chrono::milliseconds(500));
    if (!line.ok() && line.status().code() != StatusCode::kDeadlineExceeded) break;
    if (!line.ok()) continue;
    log += *line + "\n";
    std::smatch m;
    if (std::regex_search(*line, m, url)) {
      auto parsed = parse_number<uint16_t>(m[1].str(), "port");
      ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
      port = *parsed;
    }
  }
  ASSERT_TRUE(port.has_value()) << log;
  ASSERT_NE(*port, 0) << log;

  const std::string head = http(*port, "HEAD");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << head;

  std::vector<Scrape> scrapes;
  std::string last_body;  // the last scrape's text
  bool ended = false;
  while (!ended) {
    // Drain the child's output so it never blocks on a full pipe; its end is the run's.
    for (;;) {
      auto line = child->read_line(std::chrono::milliseconds(1));
      if (line.ok()) {
        log += *line + "\n";
        continue;
      }
      ended = line.status().code() != StatusCode::kDeadlineExceeded;
      break;
    }
    const std::string response = http(*port, "GET");
    if (response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0) {
      last_body = response.substr(response.find("\r\n\r\n") + 4);
      scrapes.push_back(parse(last_body));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto exit_code = child->wait(std::chrono::seconds(30));
  ASSERT_TRUE(exit_code.ok()) << exit_code.status().to_string();
  ASSERT_EQ(*exit_code, 0) << log;

  std::set<std::string> repetitions_seen;
  for (size_t i = 1; i < scrapes.size(); ++i) {
    for (const auto& [family, sum] : scrapes[i - 1].sums) {
      EXPECT_GE(scrapes[i].sums[family], sum) << family << " went down between scrapes " << i - 1 << " and " << i;
    }
  }
  for (const Scrape& s : scrapes) repetitions_seen.insert(s.repetitions.begin(), s.repetitions.end());
  std::cout << fmt::format("{} scrapes; repetitions seen: {}\n", scrapes.size(), fmt::join(repetitions_seen, ", "));
  ASSERT_GE(scrapes.size(), 2u) << log;
  // The scrapes spanned more than one repetition, so a reset would have shown.
  EXPECT_GE(repetitions_seen.size(), 3u);

  // The packets counted live are those the report counts (the last scrape may precede the last
  // run's end, never run past it).
  std::ifstream report_file(out / "report.json");
  const auto report = nlohmann::json::parse(report_file, nullptr, false);
  ASSERT_TRUE(report.is_object());
  double reported = 0;
  for (const auto& v : report["variants"]) reported += std::stod(v["packets_sent"].get<std::string>());
  const double scraped = scrapes.back().sums["collide_packets_sent_total"];
  std::cout << fmt::format("packets sent: {} in the last scrape, {} in report.json\n", scraped, reported);
  EXPECT_GT(scraped, 0);
  EXPECT_LE(scraped, reported);

  // The live JCT median of the baseline, as the endpoint computed it from the runs that had
  // ended by the last scrape, lies among the baseline's JCTs in the report.
  static const std::regex jct_median(R"re(collide_jct_seconds\{variant="baseline",quantile="0.5"\} ([0-9.e+-]+))re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(last_body, m, jct_median)) << last_body;
  const double live = std::stod(m[1].str());
  const auto& jcts = report["variants"][0]["jct_seconds"];
  ASSERT_EQ(report["variants"][0]["name"], "baseline");
  ASSERT_FALSE(jcts.empty());
  double low = jcts[0].get<double>(), high = low;
  for (const auto& j : jcts) {
    low = std::min(low, j.get<double>());
    high = std::max(high, j.get<double>());
  }
  std::cout << fmt::format("live baseline JCT median {:.4f} s; report's JCTs {:.4f}..{:.4f} s\n", live, low, high);
  EXPECT_GE(live, low);
  EXPECT_LE(live, high);
}

}  // namespace
}  // namespace collide
