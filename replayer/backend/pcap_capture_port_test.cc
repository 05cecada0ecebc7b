#include "replayer/backend/pcap_capture_port.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <time.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <vector>

#include "replayer/backend/port_factory.h"
#include "tests/support/status_matchers.h"

namespace collide::replayer::backend {
namespace {

// Takes at most `accept` frames per submit; receives what the test queued.
class ScriptedPort : public PacketPort {
 public:
  Status acquire(std::span<Frame> frames) override {
    for (auto& f : frames) {
      auto* b = new uint8_t[256];
      f = Frame{b, 0, 256, b};
    }
    return {};
  }
  uint16_t submit(std::span<Frame> frames) override {
    const size_t n = std::min<size_t>(accept, frames.size());
    for (size_t i = 0; i < n; ++i) {
      sent.emplace_back(frames[i].data, frames[i].data + frames[i].len);
      // The buffer is the port's again: it may reuse it at once.
      std::fill(frames[i].data, frames[i].data + frames[i].len, 0xee);
    }
    release(frames.first(n));
    return static_cast<uint16_t>(n);
  }
  uint16_t receive(std::span<Frame> frames) override {
    uint16_t n = 0;
    while (n < frames.size() && !inbound.empty()) {
      auto* b = new uint8_t[256];
      std::copy(inbound.front().begin(), inbound.front().end(), b);
      frames[n++] = Frame{b, static_cast<uint32_t>(inbound.front().size()), 256, b};
      inbound.pop_front();
    }
    return n;
  }
  void release(std::span<Frame> frames) override {
    for (auto& f : frames) {
      delete[] static_cast<uint8_t*>(f.handle);
      f = {};
    }
  }
  void wait_for_frames(std::chrono::microseconds) override {}
  wire::MacAddress mac() const override { return {}; }
  uint32_t max_frame_size() const override { return 256; }
  PortCounters counters() const override { return {}; }
  std::string describe() const override { return "scripted"; }

  size_t accept = 64;
  std::vector<std::vector<uint8_t>> sent;
  std::deque<std::vector<uint8_t>> inbound;
};

int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::vector<uint8_t> frame_bytes(uint8_t seed, size_t len) {
  std::vector<uint8_t> f(len);
  for (size_t i = 0; i < len; ++i) f[i] = static_cast<uint8_t>(seed * 31 + i);
  return f;
}

struct Record {
  int64_t ns;
  std::vector<uint8_t> bytes;
};

std::vector<Record> read_pcap(const std::string& path, int& precision) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  EXPECT_NE(p, nullptr) << err;
  std::vector<Record> out;
  if (p == nullptr) return out;
  EXPECT_EQ(pcap_datalink(p), DLT_EN10MB);
  precision = pcap_get_tstamp_precision(p);
  pcap_pkthdr* h;
  const u_char* data;
  while (pcap_next_ex(p, &h, &data) == 1) {
    out.push_back({static_cast<int64_t>(h->ts.tv_sec) * 1'000'000'000 + h->ts.tv_usec,
                   std::vector<uint8_t>(data, data + h->caplen)});
    EXPECT_EQ(h->caplen, h->len);
  }
  pcap_close(p);
  return out;
}

class PcapCapturePortTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = (std::filesystem::temp_directory_path() /
                       ("collide-pcap-test-" + std::to_string(getpid()) + ".pcap")).string();
};

TEST_F(PcapCapturePortTest, RecordsWhatWasTakenAndReceivedInOrderWithNanosecondStamps) {
  auto inner = std::make_unique<ScriptedPort>();
  ScriptedPort* raw = inner.get();
  raw->inbound.push_back(frame_bytes(100, 60));
  raw->inbound.push_back(frame_bytes(101, 61));
  const int64_t before = realtime_ns();
  {
    auto port = PcapCapturePort::open(std::move(inner), path_, 1000);
    ASSERT_TRUE(port.ok()) << port.status().to_string();
    std::vector<Frame> frames(3);
    ASSERT_TRUE((*port)->acquire(frames).ok());
    for (size_t i = 0; i < 3; ++i) {
      auto bytes = frame_bytes(static_cast<uint8_t>(i), 64 + i);
      std::copy(bytes.begin(), bytes.end(), frames[i].data);
      frames[i].len = static_cast<uint32_t>(bytes.size());
    }
    raw->accept = 2;  // the port is nearly full: the third frame stays with the caller
    EXPECT_EQ((*port)->submit(frames), 2);
    raw->accept = 64;
    EXPECT_EQ((*port)->submit(std::span<Frame>(frames).subspan(2)), 1);  // retried later
    std::vector<Frame> rx(8);
    EXPECT_EQ((*port)->receive(rx), 2);
    (*port)->release(std::span<Frame>(rx).first(2));
    EXPECT_EQ((*port)->captured(), 5u);
    EXPECT_EQ((*port)->not_captured(), 0u);
  }  // closing flushes the file
  const int64_t after = realtime_ns();
  int precision = -1;
  const auto records = read_pcap(path_, precision);
  EXPECT_EQ(precision, PCAP_TSTAMP_PRECISION_NANO);
  ASSERT_EQ(records.size(), 5u);
  // Each frame once, as it was when the port took it (not as the port left its buffer).
  EXPECT_EQ(records[0].bytes, frame_bytes(0, 64));
  EXPECT_EQ(records[1].bytes, frame_bytes(1, 65));
  EXPECT_EQ(records[2].bytes, frame_bytes(2, 66));
  EXPECT_EQ(records[3].bytes, frame_bytes(100, 60));
  EXPECT_EQ(records[4].bytes, frame_bytes(101, 61));
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_GE(records[i].ns, before);
    EXPECT_LE(records[i].ns, after);
    if (i > 0) {
      EXPECT_GE(records[i].ns, records[i - 1].ns);
    }
  }
  EXPECT_EQ(raw->sent.size(), 3u);
}

TEST_F(PcapCapturePortTest, StopsAtTheLimitAndCountsTheRest) {
  auto port = PcapCapturePort::open(std::make_unique<ScriptedPort>(), path_, 10);
  ASSERT_TRUE(port.ok());
  for (int round = 0; round < 4; ++round) {
    std::vector<Frame> frames(4);
    ASSERT_TRUE((*port)->acquire(frames).ok());
    for (auto& f : frames) f.len = 60;
    EXPECT_EQ((*port)->submit(frames), 4);
  }
  EXPECT_EQ((*port)->captured(), 10u);
  EXPECT_EQ((*port)->not_captured(), 6u);
  (*port)->flush();
  int precision = -1;
  EXPECT_EQ(read_pcap(path_, precision).size(), 10u);
}

TEST_F(PcapCapturePortTest, AnUnwritablePathIsAnErrorNamingIt) {
  auto port = PcapCapturePort::open(std::make_unique<ScriptedPort>(),
                                    "/nonexistent-dir/x.pcap", 10);
  ASSERT_THAT(port, StatusIs(StatusCode::kUnavailable));
  EXPECT_NE(port.status().message().find("/nonexistent-dir/x.pcap"), std::string::npos)
      << port.status().to_string();
}

TEST(PortFactoryTest, BadSpecsAreRejectedWithWhatIsWanted) {
  for (const char* spec : {"", "afpacket", "afpacket:", "dpdk:", "tap:eth0", "eth0"}) {
    auto port = open_port(spec, 0);
    ASSERT_THAT(port, StatusIs(StatusCode::kInvalidArgument)) << spec;
    EXPECT_NE(port.status().message().find("afpacket:<interface>"), std::string::npos)
        << port.status().to_string();
  }
  if (!dpdk_available()) {
    auto port = open_port("dpdk:net_null0", 0);
    ASSERT_FALSE(port.ok());
    EXPECT_NE(port.status().message().find("without DPDK"), std::string::npos)
        << port.status().to_string();
  }
}

}  // namespace
}  // namespace collide::replayer::backend
