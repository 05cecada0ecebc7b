#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp uses std::exchange without it

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include "orchestrator/metrics/http_endpoint.h"
#include "orchestrator/metrics/registry.h"

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

// Every line of the text exposition format 0.0.4: HELP, TYPE, or a sample.
void expect_exposition_format(const std::string& body) {
  static const std::regex help(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex type(R"(# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"re([a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf))re");
  ASSERT_FALSE(body.empty());
  EXPECT_EQ(body.back(), '\n');
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    EXPECT_TRUE(std::regex_match(line, help) || std::regex_match(line, type) ||
                std::regex_match(line, sample))
        << "not exposition format: " << line;
  }
}

TEST(MetricsRegistryTest, RendersFamiliesWithHelpTypeAndEscapedLabels) {
  Registry r;
  r.describe("collide_packets_sent_total", "RoCE packets sent by all ranks", "counter");
  r.add("collide_packets_sent_total", {{"variant", "loss"}, {"host", "h1"}}, 10);
  r.add("collide_packets_sent_total", {{"variant", "loss"}, {"host", "h1"}}, 5);
  r.set("collide_run_progress", {{"variant", "say \"hi\"\\\n"}}, 0.25);
  r.set("bad name-1", {{"bad-label", "x"}}, 1);
  const std::string text = r.render();
  EXPECT_NE(text.find("# HELP collide_packets_sent_total RoCE packets sent by all ranks\n"
                      "# TYPE collide_packets_sent_total counter\n"
                      "collide_packets_sent_total{host=\"h1\",variant=\"loss\"} 15\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE collide_run_progress gauge\n"
                      "collide_run_progress{variant=\"say \\\"hi\\\"\\\\\\n\"} 0.25\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("bad_name_1{bad_label=\"x\"} 1\n"), std::string::npos) << text;
  expect_exposition_format(text);
}

TEST(MetricsEndpointTest, ServesTheRegistryOverLoopback) {
  Registry r;
  r.describe("collide_retransmitted_packets_total", "packets sent again", "counter");
  r.set("collide_retransmitted_packets_total", {{"variant", "baseline"}}, 0);
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  const uint16_t port = (*endpoint)->port();
  ASSERT_NE(port, 0);
  EXPECT_EQ((*endpoint)->url(), "http://127.0.0.1:" + std::to_string(port) + "/metrics");

  std::string first = get(port, "/metrics");
  EXPECT_EQ(first.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << first;
  EXPECT_NE(first.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << first;
  EXPECT_NE(first.find("Content-Length: " + std::to_string(body_of(first).size()) + "\r\n"),
            std::string::npos);
  expect_exposition_format(body_of(first));
  EXPECT_NE(body_of(first).find("collide_retransmitted_packets_total{variant=\"baseline\"} 0\n"),
            std::string::npos);

  // Live: what the runner sets between scrapes shows in the next one, also while others write.
  std::thread writer([&r] {
    for (int i = 1; i <= 1000; ++i) r.add("collide_ops_completed_total", {{"variant", "loss"}}, 1);
  });
  for (int i = 0; i < 5; ++i) expect_exposition_format(body_of(get(port, "/metrics")));
  writer.join();
  r.set("collide_retransmitted_packets_total", {{"variant", "loss"}}, 1234);
  const std::string second = body_of(get(port, "/metrics?format=text"));
  EXPECT_NE(second.find("collide_retransmitted_packets_total{variant=\"loss\"} 1234\n"), std::string::npos) << second;
  EXPECT_NE(second.find("collide_ops_completed_total{variant=\"loss\"} 1000\n"), std::string::npos) << second;

  EXPECT_EQ(get(port, "/nope").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(http(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(http(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n").rfind("HTTP/1.1 431", 0), 0u);
}

size_t open_descriptors() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                           std::filesystem::directory_iterator()));
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

// Many more idle connections than the endpoint serves at once: it holds a bounded number of
// descriptors for them (the oldest go first) and a scrape is still answered at once.
TEST(MetricsEndpointTest, HoldsABoundedNumberOfConnectionsAndStillAnswers) {
  Registry r;
  r.set("collide_ops_completed_total", {}, 7);
  auto endpoint = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().to_string();
  const size_t before = open_descriptors();
  constexpr int kClients = 200;
  asio::io_context io;
  auto clients = idle_clients(io, (*endpoint)->port(), kClients);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the endpoint accepts them all
  const size_t held = open_descriptors() - before - kClients;
  std::cout << "the endpoint holds " << held << " descriptors for " << kClients << " idle clients\n";
  EXPECT_LE(held, 40u);
  const auto asked = std::chrono::steady_clock::now();
  const std::string response = get((*endpoint)->port(), "/metrics");
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
  EXPECT_NE(body_of(response).find("collide_ops_completed_total 7\n"), std::string::npos) << response;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count(), 1.0);
}

// Out of descriptors (RLIMIT_NOFILE lowered in a process of its own), the endpoint neither spins
// on the failing accept nor stops answering: it frees the oldest connection and waits a little.
TEST(MetricsEndpointTest, BacksOffWhenOutOfDescriptorsAndStillAnswers) {
  int port_pipe[2];
  ASSERT_EQ(pipe(port_pipe), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Registry registry;
    registry.set("collide_ops_completed_total", {}, 7);
    auto served = HttpEndpoint::start("127.0.0.1:0", registry);
    if (!served.ok()) _exit(2);
    // Room for three connections above the highest descriptor open now.
    int highest = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
      highest = std::max(highest, std::stoi(e.path().filename().string()));
    }
    const rlimit limit{static_cast<rlim_t>(highest + 4), static_cast<rlim_t>(highest + 4)};
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
  auto clients = idle_clients(io, port, 40);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double cpu_before = cpu_seconds_of(child);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double cpu = cpu_seconds_of(child) - cpu_before;
  std::cout << "out of descriptors, the endpoint used " << cpu << " s of CPU in 1 s\n";
  ASSERT_LT(cpu, 0.2) << "the accept loop spins";  // and a scrape would wait forever
  // The clients' descriptors stay open; a new scrape is still answered.
  const auto asked = std::chrono::steady_clock::now();
  const std::string response = get(port, "/metrics");
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - asked).count(), 3.0);
}

TEST(MetricsEndpointTest, RefusesBadAddressesAndBusyPorts) {
  Registry r;
  EXPECT_FALSE(HttpEndpoint::start("localhost", r).ok());
  EXPECT_FALSE(HttpEndpoint::start("nothost:80", r).ok());
  EXPECT_FALSE(HttpEndpoint::start("127.0.0.1:99999", r).ok());
  auto letters = HttpEndpoint::start("127.0.0.1:80a", r);
  ASSERT_FALSE(letters.ok());
  EXPECT_EQ(letters.status().message(),
            "metrics address '127.0.0.1:80a': port: '80a' is not a non-negative whole number");
  auto first = HttpEndpoint::start("127.0.0.1:0", r);
  ASSERT_TRUE(first.ok());
  auto second = HttpEndpoint::start("127.0.0.1:" + std::to_string((*first)->port()), r);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("cannot listen"), std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::metrics
