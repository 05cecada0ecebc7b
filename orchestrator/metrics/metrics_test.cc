#include <fcntl.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp uses std::exchange without it

#include "orchestrator/metrics/http_endpoint.h"
#include "orchestrator/metrics/registry.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::metrics {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// A plain HTTP/1.1 client over loopback: the whole response, headers and body.
std::string http(uint16_t port, const std::string& request) {
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(request));
  std::string response;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(response), ec);  // until the server closes
  return response;
}

std::string get(uint16_t port, const std::string& path) {
  return http(port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nAccept: text/plain\r\n\r\n");
}

std::string body_of(const std::string& response) {
  const auto at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

// Every line of the text exposition format 0.0.4: HELP, TYPE, or a sample. Values are read as
// Prometheus reads them (Go's ParseFloat), which takes NaN and Inf in any case: prometheus-cpp
// writes "Nan" for its own summary before a scrape.
void expect_exposition_format(const std::string& body) {
  static const std::regex help(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex type(R"(# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"re([a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")*\})? (-?[0-9.eE+-]+|[Nn][Aa][Nn]|[+-][Ii][Nn][Ff]))re");
  ASSERT_FALSE(body.empty());
  EXPECT_EQ(body.back(), '\n');
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    EXPECT_TRUE(std::regex_match(line, help) || std::regex_match(line, type) ||
                std::regex_match(line, sample))
        << "not exposition format: " << line;
  }
}

// What a scrape of the registry shows, without the endpoint.
std::string scrape(const Registry& r) { return prometheus::TextSerializer().Serialize(r.prometheus()->Collect()); }

// The value of the sample `series` (name and labels exactly as exposed); NaN when absent.
double sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return std::nan("");
}

const std::string kLossHost0 = R"({host="0",variant="loss"})";

// Agents report running totals that begin again at zero with each repetition. The counters add
// what is new, so they never drop: Prometheus reads a drop as a restart, and rate() over a soak
// run would count the whole repetition again.
TEST(MetricsRegistryTest, CountersStayMonotonicAcrossRepetitions) {
  Registry r;
  r.run_started("loss", 0);
  r.host_progress("loss", 0, {.packets_sent = 60, .retransmitted_packets = 2, .ops_completed = 3}, 0.5);
  r.host_progress("loss", 0, {.packets_sent = 100, .retransmitted_packets = 5, .ops_completed = 8}, 1.0);
  const std::string first = scrape(r);
  EXPECT_EQ(sample(first, "collide_packets_sent_total" + kLossHost0), 100) << first;
  EXPECT_EQ(sample(first, R"(collide_repetition{variant="loss"})"), 0) << first;

  r.run_started("loss", 1);
  r.host_progress("loss", 0, {.packets_sent = 10, .retransmitted_packets = 1, .ops_completed = 1}, 0.1);
  const std::string early = scrape(r);
  EXPECT_EQ(sample(early, "collide_packets_sent_total" + kLossHost0), 110) << early;
  EXPECT_EQ(sample(early, "collide_retransmitted_packets_total" + kLossHost0), 6) << early;
  EXPECT_EQ(sample(early, "collide_ops_completed_total" + kLossHost0), 9) << early;
  // What belongs to one repetition is a gauge and may go down.
  EXPECT_EQ(sample(early, R"(collide_repetition{variant="loss"})"), 1) << early;
  EXPECT_EQ(sample(early, "collide_run_elapsed_seconds" + kLossHost0), 0.1) << early;

  // A report that repeats or (out of order) trails the last one adds nothing.
  r.host_progress("loss", 0, {.packets_sent = 90, .retransmitted_packets = 4, .ops_completed = 7}, 0.9);
  r.host_progress("loss", 0, {.packets_sent = 80, .retransmitted_packets = 4, .ops_completed = 7}, 0.9);
  r.host_progress("loss", 0, {.packets_sent = 90, .retransmitted_packets = 4, .ops_completed = 7}, 0.9);
  EXPECT_EQ(sample(scrape(r), "collide_packets_sent_total" + kLossHost0), 190);

  // Another variant's runs neither reset nor feed this one's counters.
  r.run_started("baseline", 0);
  r.host_progress("baseline", 0, {.packets_sent = 5, .retransmitted_packets = 0, .ops_completed = 1}, 0.1);
  r.run_started("loss", 2);
  r.host_progress("loss", 0, {.packets_sent = 1, .retransmitted_packets = 0, .ops_completed = 0}, 0.0);
  const std::string last = scrape(r);
  EXPECT_EQ(sample(last, "collide_packets_sent_total" + kLossHost0), 191) << last;
  EXPECT_EQ(sample(last, R"(collide_packets_sent_total{host="0",variant="baseline"})"), 5) << last;
}

TEST(MetricsRegistryTest, RunEndsAddTimeoutsCollectivesFaultsAndOutcomes) {
  Registry r;
  for (uint32_t repetition = 0; repetition < 2; ++repetition) {
    r.run_started("flap", repetition);
    r.host_timeouts("flap", 1, 3);
    r.collective_completed("flap", "all_reduce", 0.004);
    r.collective_completed("flap", "all_reduce", 0.2);
    r.fault_acted("flap", "spine-flap", 40, 0.25);
    r.run_ended("flap", repetition == 1);
  }
  const std::string text = scrape(r);
  EXPECT_EQ(sample(text, R"(collide_timeouts_total{host="1",variant="flap"})"), 6) << text;
  EXPECT_EQ(sample(text, R"(collide_collective_seconds_count{kind="all_reduce",variant="flap"})"), 4) << text;
  EXPECT_EQ(sample(text, R"(collide_collective_seconds_bucket{kind="all_reduce",variant="flap",le="0.00512"})"), 2)
      << text;
  EXPECT_EQ(sample(text, R"(collide_collective_seconds_bucket{kind="all_reduce",variant="flap",le="+Inf"})"), 4)
      << text;
  EXPECT_EQ(sample(text, R"(collide_fault_packets_acted_total{fault="spine-flap",variant="flap"})"), 80) << text;
  EXPECT_EQ(sample(text, R"(collide_fault_held_seconds_total{fault="spine-flap",variant="flap"})"), 0.5) << text;
  EXPECT_EQ(sample(text, R"(collide_runs_total{outcome="ok",variant="flap"})"), 1) << text;
  EXPECT_EQ(sample(text, R"(collide_runs_total{outcome="failed",variant="flap"})"), 1) << text;
  expect_exposition_format(text);
}

// A soak's dashboard reads live quantiles straight from the scrape: JCT per variant, completion
// times per variant and kind, each a summary over the last minutes (its _count over the whole run).
TEST(MetricsRegistryTest, JctAndCompletionTimesShowAsLiveQuantiles) {
  Registry r;
  // JCTs of 1.00 .. 1.99 s; collectives of 1 .. 1000 us.
  for (int i = 0; i < 100; ++i) r.job_completed("loss", 1.0 + i / 100.0);
  for (int i = 1; i <= 1000; ++i) r.collective_completed("loss", "all_reduce", i * 1e-6);
  const std::string text = scrape(r);
  EXPECT_NEAR(sample(text, R"(collide_jct_seconds{variant="loss",quantile="0.5"})"), 1.5, 0.05) << text;
  // Within a few ranks of 100 (CKMS answers from its compressed summary, not the exact rank).
  EXPECT_NEAR(sample(text, R"(collide_jct_seconds{variant="loss",quantile="0.99"})"), 1.99, 0.031) << text;
  EXPECT_EQ(sample(text, R"(collide_jct_seconds_count{variant="loss"})"), 100) << text;
  EXPECT_NEAR(sample(text, R"(collide_collective_completion_seconds{kind="all_reduce",variant="loss",quantile="0.5"})"),
              500e-6, 50e-6)
      << text;
  EXPECT_NEAR(sample(text, R"(collide_collective_completion_seconds{kind="all_reduce",variant="loss",quantile="0.999"})"),
              999e-6, 2e-6)
      << text;
  expect_exposition_format(text);
}

// exported_series() is what the dashboard test trusts: each name it gives shows in a scrape once
// every family has a value, and a scrape shows no family it leaves out.
TEST(MetricsRegistryTest, ExportedSeriesAreWhatAScrapeShows) {
  Registry r;
  r.run_started("v", 0);
  r.host_progress("v", 0, {.packets_sent = 1, .retransmitted_packets = 1, .ops_completed = 1}, 1);
  r.host_timeouts("v", 0, 1);
  r.collective_completed("v", "all_gather", 0.001);
  r.job_completed("v", 1.5);
  r.fault_acted("v", "f", 1, 0.1);
  r.run_ended("v", false);
  std::set<std::string> scraped;
  std::istringstream in(scrape(r));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') scraped.insert(line.substr(0, line.find_first_of("{ ")));
  }
  std::set<std::string> exported;
  for (const ExportedSeries& s : Registry::exported_series()) exported.insert(s.name);
  EXPECT_EQ(scraped, exported);
}

TEST(MetricsEndpointTest, ServesTheRegistryOverLoopback) {
  Registry r;
  r.run_started("baseline", 0);
  r.host_progress("baseline", 2, {.packets_sent = 7, .retransmitted_packets = 0, .ops_completed = 1}, 0.5);
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  const uint16_t port = (*endpoint)->port();
  ASSERT_NE(port, 0);
  EXPECT_EQ((*endpoint)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");

  std::string first = get(port, "/metrics");
  EXPECT_EQ(first.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << first;
  EXPECT_NE(first.find("Content-Type: text/plain; charset=utf-8\r\n"), std::string::npos) << first;
  expect_exposition_format(body_of(first));
  EXPECT_EQ(sample(body_of(first), R"(collide_packets_sent_total{host="2",variant="baseline"})"), 7) << first;

  // Live: what the runner reports between scrapes shows in the next one, also while it writes.
  std::thread writer([&r] {
    for (uint64_t i = 1; i <= 1000; ++i) {
      r.host_progress("loss", 0, {.packets_sent = i, .retransmitted_packets = 0, .ops_completed = i}, 0);
    }
  });
  for (int i = 0; i < 5; ++i) expect_exposition_format(body_of(get(port, "/metrics")));
  writer.join();
  const std::string second = body_of(get(port, "/metrics?format=text"));
  EXPECT_EQ(sample(second, "collide_ops_completed_total" + kLossHost0), 1000) << second;

  EXPECT_EQ(get(port, "/nope").rfind("HTTP/1.1 404", 0), 0u);
  const std::string post = http(port, "POST /metrics HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos) << post;
}

// A HEAD is answered as the GET would be, without a body.
TEST(MetricsEndpointTest, HeadAnswers200WithoutBody) {
  Registry r;
  r.run_ended("baseline", false);
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  const std::string head = http((*endpoint)->port(), "HEAD /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Type: text/plain; charset=utf-8\r\n"), std::string::npos) << head;
  ASSERT_NE(head.find("\r\n\r\n"), std::string::npos) << head;
  EXPECT_EQ(body_of(head), "") << head;
}

size_t open_descriptors() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                           std::filesystem::directory_iterator()));
}

// The descriptor limit that leaves exactly `free` descriptor numbers usable: one above the
// `free`-th number, counted from 0, that is not open now.
rlim_t above_free_descriptors(int free) {
  std::set<int> open;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    open.insert(std::stoi(e.path().filename().string()));
  }
  // The listing's own descriptor was open while it was read and is closed now.
  int fd = 0;
  for (int found = 0;; ++fd) {
    const bool is_open = open.count(fd) != 0 && fcntl(fd, F_GETFD) != -1;
    if (!is_open && ++found == free) break;
  }
  return static_cast<rlim_t>(fd + 1);
}

// CPU seconds (user + system) process `pid` has used, from /proc/<pid>/stat.
double cpu_seconds_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Clients that connect and say nothing, held open.
std::vector<std::unique_ptr<tcp::socket>> idle_clients(asio::io_context& io, uint16_t port, int n) {
  std::vector<std::unique_ptr<tcp::socket>> clients;
  for (int i = 0; i < n; ++i) {
    clients.push_back(std::make_unique<tcp::socket>(io));
    clients.back()->connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  return clients;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// How long a scrape may wait behind `idle` silent clients queued before it when the endpoint can
// hold `places` connections at once: they are dropped `places` at a time after the request
// timeout (and the pause before accepting again, where accept failed), and the scrape is served
// once those before it are gone; plus a second for a loaded machine.
double scrape_bound_s(int idle, int places = HttpEndpoint::kMaxConnections) {
  const int rounds = idle / places + 1;
  return rounds * (HttpEndpoint::kRequestTimeoutMs + HttpEndpoint::kAcceptRetryMs) / 1000.0 + 1.0;
}

// Fewer silent clients than the endpoint holds at once do not delay a scrape at all.
TEST(MetricsEndpointTest, AnswersAtOnceBesideFewerIdleClientsThanItsBound) {
  Registry r;
  r.run_ended("baseline", false);
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  asio::io_context io;
  auto clients = idle_clients(io, (*endpoint)->port(), HttpEndpoint::kMaxConnections - 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // each has been accepted
  const auto asked = std::chrono::steady_clock::now();
  const std::string response = get((*endpoint)->port(), "/metrics");
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
  EXPECT_EQ(sample(body_of(response), R"(collide_runs_total{outcome="ok",variant="baseline"})"), 1) << response;
  EXPECT_LT(seconds_since(asked), 0.5);
}

// Many more silent clients than the endpoint holds at once: it holds a bounded number of
// descriptors for them (the rest wait in the kernel's listen queue), drops each after the request
// timeout, and a scrape behind them is answered within the bound that gives.
TEST(MetricsEndpointTest, HoldsABoundedNumberOfConnectionsAndStillAnswers) {
  Registry r;
  r.run_ended("baseline", false);
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  asio::io_context io;
  tcp::socket first_socket(io, tcp::v4());  // the client side's reactor descriptors, before the count
  const size_t before = open_descriptors();
  constexpr int kClients = 200;
  auto clients = idle_clients(io, (*endpoint)->port(), kClients);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the endpoint accepts what it will
  const size_t held = open_descriptors() - before - kClients;
  std::cout << "the endpoint holds " << held << " descriptors for " << kClients << " idle clients\n";
  EXPECT_LE(held, static_cast<size_t>(HttpEndpoint::kMaxConnections));
  clients.resize(3 * HttpEndpoint::kMaxConnections);  // the others hang up
  const auto asked = std::chrono::steady_clock::now();
  const std::string response = get((*endpoint)->port(), "/metrics");
  const double waited = seconds_since(asked);
  std::cout << "a scrape behind " << clients.size() << " idle clients waited " << waited << " s\n";
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
  EXPECT_LT(waited, scrape_bound_s(static_cast<int>(clients.size())));
}

// A request whose headers pass the limit is closed unanswered as soon as the limit is reached:
// a client cannot make the endpoint buffer without bound.
TEST(MetricsEndpointTest, ClosesARequestWhoseHeadersPassTheLimit) {
  Registry r;
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), (*endpoint)->port()));
  const std::string header = "X-Filler: " + std::string(HttpEndpoint::kMaxRequestHeaderBytes, 'a') + "\r\n";
  const auto asked = std::chrono::steady_clock::now();
  boost::system::error_code ec;
  asio::write(socket, asio::buffer("GET /metrics HTTP/1.1\r\nHost: localhost\r\n" + header), ec);
  std::string response;
  asio::read(socket, asio::dynamic_buffer(response), ec);  // the headers never end: the server closes
  EXPECT_EQ(response, "");
  EXPECT_LT(seconds_since(asked), HttpEndpoint::kRequestTimeoutMs / 1000.0) << "closed by the timeout, not the limit";
  // A request just within the limit is answered.
  const std::string within = "GET /metrics HTTP/1.1\r\nHost: localhost\r\nX-Filler: " +
                             std::string(HttpEndpoint::kMaxRequestHeaderBytes / 2, 'a') + "\r\n\r\n";
  EXPECT_EQ(http((*endpoint)->port(), within).rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
}

// Stopping closes what the endpoint holds and returns at once, also with silent clients connected
// and more waiting in the listen queue.
TEST(MetricsEndpointTest, StopsPromptlyWithClientsConnected) {
  Registry r;
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  const uint16_t port = (*endpoint)->port();
  asio::io_context io;
  auto clients = idle_clients(io, port, 2 * HttpEndpoint::kMaxConnections);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto asked = std::chrono::steady_clock::now();
  endpoint->reset();
  const double took = seconds_since(asked);
  std::cout << "stopping the endpoint took " << took * 1000 << " ms\n";
  EXPECT_LT(took, 0.1);
  // Every connection it held was closed: its clients read the end of the stream.
  boost::system::error_code ec;
  std::array<char, 1> byte{};
  EXPECT_EQ(clients.front()->read_some(asio::buffer(byte), ec), 0u);
  EXPECT_EQ(ec, asio::error::eof) << ec.message();
  // And the port is free again.
  tcp::socket late(io);
  late.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
  EXPECT_EQ(ec, asio::error::connection_refused) << ec.message();
}

// Out of descriptors (RLIMIT_NOFILE lowered in a process of its own), the endpoint neither spins
// on the failing accept nor stops answering: once silent clients time out, a scrape gets through.
constexpr int kFreeDescriptors = 3;
TEST(MetricsEndpointTest, BacksOffWhenOutOfDescriptorsAndStillAnswers) {
  int port_pipe[2];
  ASSERT_EQ(pipe(port_pipe), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Registry registry;
    registry.run_ended("baseline", false);
    auto served = HttpEndpoint::start("127.0.0.1:0", registry);
    if (!served.ok()) _exit(2);
    // Room for exactly three connections: the limit goes just above the third descriptor number
    // free now, counted from 0 (an inherited high descriptor, as a shell's 255, must not leave
    // hundreds of free numbers below the limit).
    const rlim_t limit_fds = above_free_descriptors(kFreeDescriptors);
    const rlimit limit{limit_fds, limit_fds};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(3);
    const uint16_t port = (*served)->port();
    if (write(port_pipe[1], &port, sizeof(port)) != sizeof(port)) _exit(4);
    for (;;) pause();
  }
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reaper{child};
  close(port_pipe[1]);
  uint16_t port = 0;
  ASSERT_EQ(read(port_pipe[0], &port, sizeof(port)), static_cast<ssize_t>(sizeof(port)));
  close(port_pipe[0]);
  asio::io_context io;
  auto clients = idle_clients(io, port, 4 * kFreeDescriptors);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu_before = cpu_seconds_of(child);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double cpu = cpu_seconds_of(child) - cpu_before;
  std::cout << "out of descriptors, the endpoint used " << cpu << " s of CPU in 1 s\n";
  ASSERT_LT(cpu, 0.2) << "the accept loop spins";  // and a scrape would wait forever
  // The clients' descriptors stay open; a new scrape is still answered.
  const auto asked = std::chrono::steady_clock::now();
  const std::string response = get(port, "/metrics");
  const double waited = seconds_since(asked);
  std::cout << "out of descriptors, a scrape behind " << clients.size() << " idle clients waited " << waited << " s\n";
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
  EXPECT_LT(waited, scrape_bound_s(static_cast<int>(clients.size()), kFreeDescriptors));
}

TEST(MetricsEndpointTest, RefusesBadAddressesAndBusyPorts) {
  Registry r;
  EXPECT_THAT(HttpEndpoint::start("localhost", r), StatusIs(StatusCode::kInvalidArgument));
  auto host = HttpEndpoint::start("localhost:9464", r);
  ASSERT_THAT(host, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(host.status().message(),
            "metrics address 'localhost:9464': 'localhost' is not an IP address (IPv4, or IPv6 in brackets as [::1])");
  EXPECT_THAT(HttpEndpoint::start("::1:9464", r),
              StatusIs(StatusCode::kInvalidArgument));  // IPv6 without brackets
  EXPECT_THAT(HttpEndpoint::start("127.0.0.1:99999", r), StatusIs(StatusCode::kInvalidArgument));
  auto letters = HttpEndpoint::start("127.0.0.1:80a", r);
  ASSERT_THAT(letters, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(letters.status().message(),
            "metrics address '127.0.0.1:80a': port: '80a' is not a non-negative whole number");
  auto first = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(first.ok());
  const std::string busy = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = HttpEndpoint::start(busy, r);
  ASSERT_THAT(second, StatusIs(StatusCode::kUnavailable));
  // The operating system's reason.
  EXPECT_EQ(second.status().message().rfind("metrics endpoint: cannot listen on " + busy + ": ", 0), 0u)
      << second.status().message();
  EXPECT_NE(second.status().message().find("Address already in use"), std::string::npos)
      << second.status().message();
  // The first endpoint still answers.
  EXPECT_EQ(get((*first)->port(), "/metrics").rfind("HTTP/1.1 200 OK\r\n", 0), 0u);
}

// IPv6 loopback, where the kernel has it.
TEST(MetricsEndpointTest, ServesIpv6Loopback) {
  Registry r;
  auto endpoint = HttpEndpoint::start("[::1]:0", r);
  if (!endpoint.ok() && (endpoint.status().message().find("Cannot assign requested address") != std::string::npos ||
                         endpoint.status().message().find("Address family not supported") != std::string::npos)) {
    GTEST_SKIP() << "no IPv6 loopback here: " << endpoint.status().message();
  }
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  EXPECT_EQ((*endpoint)->url(), "http://[::1]:" + std::to_string((*endpoint)->port()) + "/metrics");
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("::1"), (*endpoint)->port()));
  asio::write(socket, asio::buffer(std::string("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")));
  std::string response;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(response), ec);
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
}

}  // namespace
}  // namespace collide::orchestrator::metrics
