// The fault program run on crafted frames with BPF_PROG_TEST_RUN: no interface, exact counts.
#include "injectors/fault_injector.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/pkt_cls.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "replayer/wire/roce_frame.h"
#include "tests/support/privileged.h"

namespace collide::injectors {
namespace {

namespace wire = replayer::wire;
using namespace std::chrono_literals;

constexpr int kPass = TC_ACT_UNSPEC;
constexpr int kDrop = TC_ACT_SHOT;
constexpr size_t kIpOffset = 14;
constexpr size_t kUdpOffset = 14 + 20;

struct FrameSpec {
  std::string src = "10.0.0.1";
  std::string dst = "10.0.0.2";
  uint16_t sport = 49152;
  uint8_t tos = (26 << 2) | 2;  // DSCP 26, ECT(0)
  wire::Opcode opcode = wire::Opcode::kWriteOnly;
  uint32_t qp = 0x123;
  uint32_t psn = 150;
  size_t payload = 256;
};

std::vector<uint8_t> roce_frame(const FrameSpec& s) {
  wire::RoceHeaders h;
  h.endpoints.src_ip = *wire::Ipv4Address::parse(s.src);
  h.endpoints.dst_ip = *wire::Ipv4Address::parse(s.dst);
  h.endpoints.udp_src_port = s.sport;
  h.endpoints.tos = s.tos;
  h.bth.opcode = s.opcode;
  h.bth.dest_qp = s.qp;
  h.bth.psn = s.psn;
  if (wire::opcode_has_reth(s.opcode)) h.reth = wire::Reth{};
  if (wire::opcode_has_aeth(s.opcode)) h.aeth = wire::Aeth{};
  std::vector<uint8_t> payload(s.payload);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7 + 1);
  std::vector<uint8_t> out(wire::roce_frame_size(h, payload.size()));
  EXPECT_TRUE(wire::write_roce_frame(out, h, payload).ok());
  return out;
}

uint16_t be16(const std::vector<uint8_t>& f, size_t off) {
  return static_cast<uint16_t>(f[off] << 8 | f[off + 1]);
}
void put_be16(std::vector<uint8_t>& f, size_t off, uint16_t v) {
  f[off] = static_cast<uint8_t>(v >> 8);
  f[off + 1] = static_cast<uint8_t>(v);
}

// One's-complement sum of the IPv4 pseudo header and the UDP datagram; 0xffff when valid.
uint16_t udp_sum(const std::vector<uint8_t>& f) {
  const size_t udp_len = be16(f, kUdpOffset + 4);
  uint32_t sum = 0;
  for (size_t i = 12; i < 20; i += 2) sum += be16(f, kIpOffset + i);  // addresses
  sum += 17 + udp_len;
  for (size_t i = 0; i < udp_len; i += 2) {
    const uint8_t lo = i + 1 < udp_len ? f[kUdpOffset + i + 1] : 0;
    sum += static_cast<uint32_t>(f[kUdpOffset + i] << 8 | lo);
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

void set_udp_checksum(std::vector<uint8_t>& f) {
  put_be16(f, kUdpOffset + 6, 0);
  uint16_t c = static_cast<uint16_t>(~udp_sum(f));
  put_be16(f, kUdpOffset + 6, c == 0 ? 0xffff : c);
}

bool ipv4_checksum_ok(const std::vector<uint8_t>& f) {
  uint32_t sum = 0;
  for (size_t i = 0; i < 20; i += 2) sum += be16(f, kIpOffset + i);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

struct TestRun {
  int retval = 0;
  uint32_t ns_per_run = 0;
  std::vector<uint8_t> out;
};

TestRun run(int prog_fd, const std::vector<uint8_t>& f, int repeat = 1) {
  TestRun r;
  r.out.resize(f.size() + 256);
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f.data(),
              .data_out = r.out.data(), .data_size_in = static_cast<uint32_t>(f.size()),
              .data_size_out = static_cast<uint32_t>(r.out.size()), .repeat = repeat);
  EXPECT_EQ(bpf_prog_test_run_opts(prog_fd, &opts), 0) << std::strerror(errno);
  r.retval = static_cast<int>(opts.retval);
  r.ns_per_run = opts.duration;
  r.out.resize(opts.data_size_out);
  return r;
}

std::unique_ptr<FaultInjector> armed(std::vector<FaultRule> rules, bool events = false,
                                     Allowlist allow = {}) {
  FaultInjectorOptions o;
  o.rules = std::move(rules);
  o.events = events;
  o.allow = std::move(allow);
  auto f = FaultInjector::load(std::move(o));
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  if (!f.ok()) return nullptr;
  EXPECT_TRUE((*f)->arm().ok());
  return std::move(f).value();
}

int ingress(const FaultInjector& f) { return f.program_fd(Direction::kIngress); }

FaultRule bernoulli(double p, uint64_t seed) {
  FaultRule r;
  r.decider = Decider::kBernoulli;
  r.probability = p;
  r.seed = seed;
  return r;
}

// Flow indices of the packets acted on, from the event ring.
std::vector<uint64_t> acted_indices(FaultInjector& f) {
  std::vector<uint64_t> idx;
  auto n = f.drain_events([&](const collide_fault_event& e) { idx.push_back(e.flow_index); });
  EXPECT_TRUE(n.ok()) << n.status().to_string();
  std::sort(idx.begin(), idx.end());
  return idx;
}

TEST(FaultInjectorTest, BernoulliOnePercentIsWithinThreeSigmaAndRepeatable) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  constexpr int kFrames = 1'000'000;
  auto a = armed({bernoulli(0.01, 7)}, true);
  ASSERT_TRUE(a);
  const uint32_t ns = run(ingress(*a), frame, kFrames).ns_per_run;
  const auto ca = a->counters();
  ASSERT_TRUE(ca.ok());
  EXPECT_EQ((*ca)[0].matched, static_cast<uint64_t>(kFrames));
  // Mean 10,000; 3 sigma = 3 x sqrt(10^6 x 0.01 x 0.99) = 298.5.
  EXPECT_GE((*ca)[0].acted, 10000u - 298);
  EXPECT_LE((*ca)[0].acted, 10000u + 298);
  std::cout << "bernoulli 1% of 10^6: dropped " << (*ca)[0].acted << " (10000 +/- 298), " << ns
            << " ns per packet with events\n";
  const auto dropped_a = acted_indices(*a);
  EXPECT_EQ(dropped_a.size(), (*ca)[0].acted);
  EXPECT_EQ(a->stats()->events_lost, 0u);

  // The same seed drops the same frames; another seed drops others.
  auto b = armed({bernoulli(0.01, 7)}, true);
  ASSERT_TRUE(b);
  run(ingress(*b), frame, kFrames);
  EXPECT_EQ(acted_indices(*b), dropped_a);
  auto c = armed({bernoulli(0.01, 8)}, true);
  ASSERT_TRUE(c);
  run(ingress(*c), frame, kFrames);
  EXPECT_NE(acted_indices(*c), dropped_a);
}

TEST(FaultInjectorTest, ProbabilityZeroAndOneAreExact) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  auto none = armed({bernoulli(0, 1)});
  ASSERT_TRUE(none);
  EXPECT_EQ(run(ingress(*none), frame, 100000).retval, kPass);
  EXPECT_EQ((*none->counters())[0].acted, 0u);
  EXPECT_EQ((*none->counters())[0].matched, 100000u);
  auto all = armed({bernoulli(1, 1)});
  ASSERT_TRUE(all);
  EXPECT_EQ(run(ingress(*all), frame, 100000).retval, kDrop);
  EXPECT_EQ((*all->counters())[0].acted, 100000u);
  EXPECT_EQ((*all->counters())[0].bytes_acted, 100000u * frame.size());
}

// Losses and bursts (runs of consecutive lost indices) from sorted lost indices.
struct LossRuns {
  uint64_t losses = 0;
  uint64_t bursts = 0;
};
LossRuns runs_of(const std::vector<uint64_t>& lost) {
  LossRuns r;
  r.losses = lost.size();
  for (size_t i = 0; i < lost.size(); ++i) {
    if (i == 0 || lost[i] != lost[i - 1] + 1) ++r.bursts;
  }
  return r;
}

// Gilbert-Elliott, theory. States G, B; per packet the chain moves (G->B with p, B->G with r),
// then the packet is lost with a = 1-k in G, b = 1-h in B. Stationary pi_B = p/(p+r), and the
// loss rate L = pi_G a + pi_B b. Losses are correlated, so the binomial variance n L (1-L) is too
// small. With X_i the loss indicator, X_i and X_j (i != j) are independent given the states, so
// Cov(X_0, X_k) = (b-a)^2 Cov(1{S_0=B}, 1{S_k=B}) = (b-a)^2 pi_G pi_B lambda^k, lambda = 1-p-r
// the chain's second eigenvalue. Summing over all pairs:
//   Var(losses in n) ~= n [ L (1-L) + 2 (b-a)^2 pi_G pi_B lambda / (1-lambda) ].
// For classic Gilbert (a = 0, b = 1) this is n pi_B pi_G (1+lambda)/(1-lambda). A burst there is
// a stay in B: geometric, mean 1/r, variance (1-r)/r^2; the mean of the bursts seen has standard
// deviation sqrt((1-r)/r^2 / bursts).
double gilbert_loss(const GilbertParams& g) {
  const double pb = g.p / (g.p + g.r);
  return (1 - pb) * (1 - g.k) + pb * (1 - g.h);
}
double gilbert_sigma(const GilbertParams& g, double n) {
  const double pb = g.p / (g.p + g.r);
  const double pg = 1 - pb;
  const double l = gilbert_loss(g);
  const double lambda = 1 - g.p - g.r;
  const double d = (1 - g.h) - (1 - g.k);
  return std::sqrt(n * (l * (1 - l) + 2 * d * d * pg * pb * lambda / (1 - lambda)));
}

TEST(FaultInjectorTest, GilbertLossRateAndBurstLengthMatchTheory) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  constexpr int kFrames = 1'000'000;

  FaultRule classic;
  classic.decider = Decider::kGilbert;
  classic.gilbert = {0.01, 0.25, 0, 1};
  classic.seed = 11;
  auto f = armed({classic}, true);
  ASSERT_TRUE(f);
  run(ingress(*f), frame, kFrames);
  const auto lost = acted_indices(*f);
  ASSERT_EQ(f->stats()->events_lost, 0u);
  const LossRuns r = runs_of(lost);
  const double mean = kFrames * gilbert_loss(classic.gilbert);  // 38,462
  const double sigma = gilbert_sigma(classic.gilbert, kFrames);  // ~497
  EXPECT_NEAR(static_cast<double>(r.losses), mean, 3 * sigma)
      << "mean " << mean << " sigma " << sigma;
  const double burst = static_cast<double>(r.losses) / static_cast<double>(r.bursts);
  std::cout << "gilbert p=0.01 r=0.25: lost " << r.losses << " (theory " << mean << " +/- "
            << 3 * sigma << "), mean burst " << burst << " over " << r.bursts
            << " bursts (theory 4)\n";
  const double burst_sigma = std::sqrt((1 - 0.25) / (0.25 * 0.25) / static_cast<double>(r.bursts));
  EXPECT_NEAR(burst, 1 / 0.25, 3 * burst_sigma) << "bursts " << r.bursts;

  FaultRule general = classic;
  general.gilbert = {0.02, 0.2, 0.3, 0.995};
  general.seed = 12;
  auto g = armed({general});
  ASSERT_TRUE(g);
  run(ingress(*g), frame, kFrames);
  std::cout << "gilbert p=0.02 r=0.2 h=0.3 k=0.995: lost " << (*g->counters())[0].acted
            << " (theory " << kFrames * gilbert_loss(general.gilbert) << " +/- "
            << 3 * gilbert_sigma(general.gilbert, kFrames) << ")\n";
  EXPECT_NEAR(static_cast<double>((*g->counters())[0].acted), kFrames * gilbert_loss(general.gilbert),
              3 * gilbert_sigma(general.gilbert, kFrames));
}

TEST(FaultInjectorTest, Markov4IsolatedLossesAndBursts) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  constexpr int kFrames = 200'000;
  // Only 1->4->1: every loss is alone (state 4 always returns to 1).
  FaultRule isolated;
  isolated.decider = Decider::kMarkov4;
  isolated.markov4 = {0, 1, 0, 0, 0.02};
  auto f = armed({isolated}, true);
  ASSERT_TRUE(f);
  run(ingress(*f), frame, kFrames);
  const LossRuns r = runs_of(acted_indices(*f));
  EXPECT_GT(r.losses, 0u);
  EXPECT_EQ(r.bursts, r.losses);
  // Only 1<->3 (p32 = 0): a burst is a stay in 3, geometric with mean 1/p31.
  FaultRule bursty;
  bursty.decider = Decider::kMarkov4;
  bursty.markov4 = {0.01, 0.2, 0, 0, 0};
  auto g = armed({bursty}, true);
  ASSERT_TRUE(g);
  run(ingress(*g), frame, kFrames);
  const LossRuns b = runs_of(acted_indices(*g));
  ASSERT_GT(b.bursts, 100u);
  const double burst = static_cast<double>(b.losses) / static_cast<double>(b.bursts);
  EXPECT_NEAR(burst, 5.0, 3 * std::sqrt(0.8 / 0.04 / static_cast<double>(b.bursts)));
}

TEST(FaultInjectorTest, EveryNthAndPsnListAreExact) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  FaultRule nth;
  nth.decider = Decider::kEveryNth;
  nth.every_nth = 7;
  auto f = armed({nth}, true);
  ASSERT_TRUE(f);
  run(ingress(*f), roce_frame({}), 700);
  const auto idx = acted_indices(*f);
  ASSERT_EQ(idx.size(), 100u);
  for (size_t i = 0; i < idx.size(); ++i) EXPECT_EQ(idx[i], 7 * i + 6);

  FaultRule list;
  list.decider = Decider::kPsnList;
  list.psns = {5, 17, 42};
  auto g = armed({list});
  ASSERT_TRUE(g);
  std::vector<uint32_t> dropped;
  for (uint32_t psn = 0; psn < 100; ++psn) {
    FrameSpec s;
    s.psn = psn;
    if (run(ingress(*g), roce_frame(s)).retval == kDrop) dropped.push_back(psn);
  }
  EXPECT_EQ(dropped, list.psns);
}

// A drop-all rule aimed at exactly one kind of packet, and that packet varied one field at a
// time: each variant must pass untouched.
TEST(FaultInjectorTest, TargetingIsExact) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  FaultRule r;
  r.match.ifindex = 1;  // test runs happen on loopback
  r.match.directions = COLLIDE_FAULT_DIR_INGRESS;
  r.match.l4_proto = 17;
  r.match.src = *parse_prefix("10.0.0.0/24");
  r.match.dst = *parse_prefix("10.0.0.2/32");
  r.match.sport = *parse_port_range("49152-49160");
  r.match.dport = *parse_port_range("4791");
  r.match.dscp.reset();
  r.match.dscp.set(26);
  r.match.ecn.reset();
  r.match.ecn.set(2);
  r.match.roce = true;
  r.match.opcodes = *parse_opcodes("0x0a");
  r.match.qp = *parse_u24_range("0x123");
  r.match.psn = *parse_u24_range("100-200");
  auto f = armed({r});
  ASSERT_TRUE(f);

  EXPECT_EQ(run(ingress(*f), roce_frame({})).retval, kDrop);
  EXPECT_EQ(run(f->program_fd(Direction::kEgress), roce_frame({})).retval, kPass) << "direction";
  auto variant = [](auto change) {
    FrameSpec s;
    change(s);
    return roce_frame(s);
  };
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> outside = {
      {"src", variant([](FrameSpec& s) { s.src = "10.0.1.1"; })},
      {"dst", variant([](FrameSpec& s) { s.dst = "10.0.0.3"; })},
      {"sport", variant([](FrameSpec& s) { s.sport = 49161; })},
      {"dscp", variant([](FrameSpec& s) { s.tos = (27 << 2) | 2; })},
      {"ecn", variant([](FrameSpec& s) { s.tos = (26 << 2) | 1; })},
      {"opcode", variant([](FrameSpec& s) { s.opcode = wire::Opcode::kWriteMiddle; })},
      {"qp", variant([](FrameSpec& s) { s.qp = 0x124; })},
      {"psn low", variant([](FrameSpec& s) { s.psn = 99; })},
      {"psn high", variant([](FrameSpec& s) { s.psn = 201; })},
  };
  for (const auto& [what, frame] : outside) {
    EXPECT_EQ(run(ingress(*f), frame).retval, kPass) << what;
  }
  // Not UDP 4791: another destination port, and the same bytes labelled TCP.
  auto other_port = roce_frame({});
  put_be16(other_port, kUdpOffset + 2, 4792);
  EXPECT_EQ(run(ingress(*f), other_port).retval, kPass) << "dport";
  auto tcp = roce_frame({});
  tcp[kIpOffset + 9] = 6;
  EXPECT_EQ(run(ingress(*f), tcp).retval, kPass) << "protocol";
  // Edges of the ranges still match.
  EXPECT_EQ(run(ingress(*f), variant([](FrameSpec& s) { s.psn = 200; })).retval, kDrop);
  EXPECT_EQ(run(ingress(*f), variant([](FrameSpec& s) { s.sport = 49160; })).retval, kDrop);
  EXPECT_EQ((*f->counters())[0].acted, 3u);
  EXPECT_EQ((*f->counters())[0].matched, 3u);

  FaultRule elsewhere;
  elsewhere.match.ifindex = 9999;
  auto g = armed({elsewhere});
  ASSERT_TRUE(g);
  EXPECT_EQ(run(ingress(*g), roce_frame({})).retval, kPass) << "ifindex";
}

// Ethernet / IPv6 / UDP 4791 / BTH / 64 bytes, built by hand (the RoCE builder is IPv4 only).
std::vector<uint8_t> ipv6_roce_frame(const std::string& src, const std::string& dst, uint8_t tc) {
  std::vector<uint8_t> f(14 + 40 + 8 + 12 + 64, 0);
  f[12] = 0x86;
  f[13] = 0xdd;
  f[14] = static_cast<uint8_t>(0x60 | tc >> 4);
  f[15] = static_cast<uint8_t>((tc & 0x0f) << 4);
  put_be16(f, 18, 8 + 12 + 64);
  f[20] = 17;
  f[21] = 64;
  EXPECT_EQ(inet_pton(AF_INET6, src.c_str(), &f[22]), 1);
  EXPECT_EQ(inet_pton(AF_INET6, dst.c_str(), &f[38]), 1);
  put_be16(f, 54, 49152);
  put_be16(f, 56, 4791);
  put_be16(f, 58, 8 + 12 + 64);
  f[62] = 0x0a;  // BTH: RDMA WRITE ONLY
  f[73] = 150;   // PSN
  return f;
}

TEST(FaultInjectorTest, Ipv6PrefixesAndEcnMark) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  FaultRule drop;
  drop.match.dst = *parse_prefix("fd00::/64");
  drop.match.roce = true;
  drop.match.psn = *parse_u24_range("150");
  FaultRule mark;
  mark.action = Action::kEcnCe;
  mark.match.src = *parse_prefix("fd01::1/128");
  auto f = armed({drop, mark});
  ASSERT_TRUE(f);
  EXPECT_EQ(run(ingress(*f), ipv6_roce_frame("fd01::1", "fd00::2", 0)).retval, kDrop);
  const TestRun m = run(ingress(*f), ipv6_roce_frame("fd01::1", "fd00:0:0:1::2", (10 << 2) | 2));
  ASSERT_EQ(m.retval, kPass);
  const uint8_t tc = static_cast<uint8_t>((m.out[14] & 0x0f) << 4 | m.out[15] >> 4);
  EXPECT_EQ(tc, (10 << 2) | 3) << "CE set, DSCP kept";
  EXPECT_EQ(run(ingress(*f), ipv6_roce_frame("fd01::2", "fd02::2", 0)).retval, kPass);
  // An IPv4 packet never matches an IPv6 prefix (and the reverse: ::ffff:0:0/96 is IPv4 only).
  EXPECT_EQ(run(ingress(*f), roce_frame({})).retval, kPass);
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].acted, 1u);
  EXPECT_EQ((*c)[1].acted, 1u);
}

TEST(FaultInjectorTest, AllowlistBeatsDropAll) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  Allowlist allow;
  allow.tcp_ports = {22};
  allow.prefixes = {*parse_prefix("192.0.2.0/24")};
  auto f = armed({FaultRule{}}, false, allow);  // ALWAYS drop, any packet
  ASSERT_TRUE(f);
  EXPECT_EQ(run(ingress(*f), roce_frame({})).retval, kDrop);
  auto tcp22 = roce_frame({});
  tcp22[kIpOffset + 9] = 6;
  put_be16(tcp22, kUdpOffset + 2, 22);
  EXPECT_EQ(run(ingress(*f), tcp22).retval, kPass);
  put_be16(tcp22, kUdpOffset + 2, 23);
  EXPECT_EQ(run(ingress(*f), tcp22).retval, kDrop);
  FrameSpec mgmt;
  mgmt.src = "192.0.2.9";
  EXPECT_EQ(run(ingress(*f), roce_frame(mgmt)).retval, kPass);
  // ARP (not IP) always passes.
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(run(ingress(*f), arp).retval, kPass);
  EXPECT_EQ(f->stats()->allowed, 3u);
}

TEST(FaultInjectorTest, WindowsAndLeaseAreHonoured) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  FaultRule later;
  later.window = {std::chrono::nanoseconds(1h), std::chrono::nanoseconds(0)};
  FaultRule brief;
  brief.window = {std::chrono::nanoseconds(0), std::chrono::nanoseconds(300ms)};  // generous: a loaded machine may be slow to run
  auto f = armed({later});
  ASSERT_TRUE(f);
  EXPECT_EQ(run(ingress(*f), frame).retval, kPass);
  EXPECT_EQ((*f->counters())[0].matched, 0u);
  auto g = armed({brief});
  ASSERT_TRUE(g);
  EXPECT_EQ(run(ingress(*g), frame).retval, kDrop);
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(run(ingress(*g), frame).retval, kPass);
  EXPECT_EQ((*g->counters())[0].acted, 1u);

  // Not armed yet: inert. Armed without renewal: acts until the lease runs out, then inert.
  FaultInjectorOptions o;
  o.rules = {FaultRule{}};
  o.lease = 300ms;
  o.renew_lease = false;
  auto h = FaultInjector::load(o);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(run(ingress(**h), frame).retval, kPass);
  ASSERT_TRUE((*h)->arm().ok());
  EXPECT_EQ(run(ingress(**h), frame).retval, kDrop);
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(run(ingress(**h), frame, 10).retval, kPass);
  EXPECT_EQ((*(*h)->counters())[0].acted, 1u);
  EXPECT_EQ((*h)->stats()->inert, 11u);

  // With renewal the same short lease keeps the rule alive.
  o.renew_lease = true;
  auto k = FaultInjector::load(o);
  ASSERT_TRUE(k.ok());
  ASSERT_TRUE((*k)->arm().ok());
  std::this_thread::sleep_for(700ms);  // more than two leases: only renewals keep it alive
  EXPECT_EQ(run(ingress(**k), frame).retval, kDrop);
  ASSERT_TRUE((*k)->disarm().ok());
  EXPECT_EQ(run(ingress(**k), frame).retval, kPass);
}

TEST(FaultInjectorTest, CorruptStaleOrSilentAndEcnMark) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  auto frame = roce_frame({});
  set_udp_checksum(frame);
  ASSERT_EQ(udp_sum(frame), 0xffff);

  FaultRule stale;
  stale.action = Action::kCorrupt;
  auto f = armed({stale});
  ASSERT_TRUE(f);
  const TestRun s = run(ingress(*f), frame);
  ASSERT_EQ(s.retval, kPass);
  ASSERT_EQ(s.out.size(), frame.size());
  size_t differing = 0;
  for (size_t i = 0; i < frame.size(); ++i) differing += s.out[i] != frame[i];
  EXPECT_EQ(differing, 1u);
  EXPECT_NE(udp_sum(s.out), 0xffff) << "stale checksum must not verify";

  FaultRule silent = stale;
  silent.corrupt_silent = true;
  auto g = armed({silent});
  ASSERT_TRUE(g);
  const TestRun q = run(ingress(*g), frame);
  ASSERT_EQ(q.retval, kPass);
  EXPECT_EQ(udp_sum(q.out), 0xffff) << "silent corruption keeps the UDP checksum valid";
  EXPECT_NE(q.out, frame);
  auto parsed = wire::parse_roce_frame(q.out);
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->icrc_ok()) << "only the ICRC shows the damage";
  auto original = wire::parse_roce_frame(frame);
  ASSERT_TRUE(original.ok());
  EXPECT_TRUE(original->icrc_ok());

  FaultRule ecn;
  ecn.action = Action::kEcnCe;
  auto h = armed({ecn});
  ASSERT_TRUE(h);
  const TestRun e = run(ingress(*h), frame);
  ASSERT_EQ(e.retval, kPass);
  EXPECT_EQ(e.out[kIpOffset + 1], (26 << 2) | 3);
  EXPECT_TRUE(ipv4_checksum_ok(e.out));
  EXPECT_EQ((*h->counters())[0].acted, 1u);
}

TEST(FaultInjectorTest, PoliceDropsBeyondTheBucket) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  FaultRule police;
  police.decider = Decider::kPolice;
  police.rate_bytes_per_s = 1000;  // refills 0.02 bytes in the 20 us the runs take
  police.burst_bytes = 3000;
  auto f = armed({police});
  ASSERT_TRUE(f);
  run(ingress(*f), frame, 20);
  const uint64_t fit = 3000 / frame.size();
  EXPECT_EQ((*f->counters())[0].acted, 20 - fit);
}

TEST(FaultInjectorTest, DropStopsLaterRulesOtherActionsDoNot) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  FaultRule mark;
  mark.id = 1;
  mark.action = Action::kEcnCe;
  FaultRule drop;
  drop.id = 2;
  FaultRule never_reached;
  never_reached.id = 3;
  auto f = armed({mark, drop, never_reached});
  ASSERT_TRUE(f);
  EXPECT_EQ(run(ingress(*f), frame).retval, kDrop);
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].acted, 1u);
  EXPECT_EQ((*c)[1].acted, 1u);
  EXPECT_EQ((*c)[2].matched, 0u);
  FaultInjectorOptions too_many;
  too_many.rules.resize(65);
  EXPECT_FALSE(FaultInjector::load(too_many).ok());
}

TEST(FaultInjectorTest, AllSixtyFourRulesAreEvaluatedInOrder) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  std::vector<FaultRule> rules(COLLIDE_FAULT_MAX_RULES);
  for (size_t i = 0; i + 1 < rules.size(); ++i) {
    rules[i].id = static_cast<uint32_t>(i);
    rules[i].match.dport = {1, 1};  // never this traffic
  }
  rules.back().id = COLLIDE_FAULT_MAX_RULES - 1;
  rules.back().decider = Decider::kBernoulli;
  rules.back().probability = 0.5;
  auto f = armed(rules);
  ASSERT_TRUE(f);
  constexpr int kFrames = 100000;
  const uint32_t ns = run(ingress(*f), roce_frame({}), kFrames).ns_per_run;
  const auto c = f->counters();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->back().matched, static_cast<uint64_t>(kFrames));
  EXPECT_GT(c->back().acted, 0u);
  for (size_t i = 0; i + 1 < c->size(); ++i) EXPECT_EQ((*c)[i].matched, 0u);
  std::cout << "64 rules, the last one matching: " << ns << " ns per packet\n";
}


// XDP ingress (fault_xdp): the same rule evaluation and maps as tc, other verdict codes.
constexpr int kXdpPass = XDP_PASS;
constexpr int kXdpDrop = XDP_DROP;

TEST(FaultInjectorXdpTest, BernoulliOnePercentWithinThreeSigmaAndSameFramesAsTc) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  const auto frame = roce_frame({});
  constexpr int kFrames = 1'000'000;
  auto x = armed({bernoulli(0.01, 7)}, true);
  ASSERT_TRUE(x);
  const uint32_t ns = run(x->xdp_program_fd(), frame, kFrames).ns_per_run;
  const auto cx = x->counters();
  ASSERT_TRUE(cx.ok());
  EXPECT_EQ((*cx)[0].matched, static_cast<uint64_t>(kFrames));
  EXPECT_GE((*cx)[0].acted, 10000u - 298);  // mean 10,000, 3 sigma 298.5
  EXPECT_LE((*cx)[0].acted, 10000u + 298);
  std::cout << "xdp bernoulli 1% of 10^6: dropped " << (*cx)[0].acted << " (10000 +/- 298), "
            << ns << " ns per packet with events\n";
  const auto dropped_xdp = acted_indices(*x);
  EXPECT_EQ(dropped_xdp.size(), (*cx)[0].acted);

  // The tc program with the same seed picks the very same packets of the flow.
  auto t = armed({bernoulli(0.01, 7)}, true);
  ASSERT_TRUE(t);
  run(ingress(*t), frame, kFrames);
  EXPECT_EQ(acted_indices(*t), dropped_xdp);
}

TEST(FaultInjectorXdpTest, SameVerdictAsTcFrameByFrameOverManyFlows) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  FaultRule g;
  g.decider = Decider::kGilbert;
  g.gilbert = {0.05, 0.3, 0.2, 1.0};  // bursts: 80% loss in B, none in G
  g.seed = 11;
  auto x = armed({bernoulli(0.1, 3), g});
  auto t = armed({bernoulli(0.1, 3), g});
  ASSERT_TRUE(x && t);
  size_t drops = 0;
  for (uint32_t i = 0; i < 4000; ++i) {
    FrameSpec spec;
    spec.sport = static_cast<uint16_t>(49152 + i % 16);  // 16 flows, interleaved
    spec.psn = i;
    const auto frame = roce_frame(spec);
    const int vx = run(x->xdp_program_fd(), frame).retval;
    const int vt = run(ingress(*t), frame).retval;
    ASSERT_TRUE(vx == kXdpPass || vx == kXdpDrop) << vx;
    ASSERT_EQ(vx == kXdpDrop, vt == kDrop) << "frame " << i;
    drops += vx == kXdpDrop;
  }
  EXPECT_GT(drops, 100u);
  const auto cx = *x->counters();
  const auto ct = *t->counters();
  for (size_t r = 0; r < cx.size(); ++r) {
    EXPECT_EQ(cx[r].matched, ct[r].matched);
    EXPECT_EQ(cx[r].acted, ct[r].acted);
    EXPECT_EQ(cx[r].bytes_acted, ct[r].bytes_acted);
  }
}

TEST(FaultInjectorXdpTest, EcnMarkAndCorruptionWriteWhatTcWrites) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  auto frame = roce_frame({});
  set_udp_checksum(frame);
  ASSERT_EQ(udp_sum(frame), 0xffff);

  FaultRule ecn;
  ecn.action = Action::kEcnCe;
  auto h = armed({ecn}, true);
  ASSERT_TRUE(h);
  const TestRun e = run(h->xdp_program_fd(), frame);
  ASSERT_EQ(e.retval, kXdpPass);
  EXPECT_EQ(e.out[kIpOffset + 1], (26 << 2) | 3);
  EXPECT_TRUE(ipv4_checksum_ok(e.out)) << "the IPv4 header checksum follows the TOS change";
  EXPECT_EQ((*h->counters())[0].acted, 1u);
  EXPECT_EQ(acted_indices(*h).size(), 1u) << "an event per action, as on tc";
  auto ht = armed({ecn});
  ASSERT_TRUE(ht);
  EXPECT_EQ(run(ingress(*ht), frame).out, e.out);

  // An ECN mark over a TOS whose checksum change wraps around (all-ones sums).
  FrameSpec wrap;
  wrap.tos = 0xfd;
  wrap.src = "255.255.255.254";
  const auto wf = roce_frame(wrap);
  const TestRun we = run(h->xdp_program_fd(), wf);
  EXPECT_EQ(we.out[kIpOffset + 1], 0xff);
  EXPECT_TRUE(ipv4_checksum_ok(we.out));

  FaultRule stale;
  stale.action = Action::kCorrupt;
  FaultRule silent = stale;
  silent.corrupt_silent = true;
  for (const FaultRule& rule : {stale, silent}) {
    auto x = armed({rule});
    auto t = armed({rule});
    ASSERT_TRUE(x && t);
    const TestRun ox = run(x->xdp_program_fd(), frame);
    const TestRun ot = run(ingress(*t), frame);
    ASSERT_EQ(ox.retval, kXdpPass);
    EXPECT_NE(ox.out, frame);
    EXPECT_EQ(ox.out, ot.out) << "silent " << rule.corrupt_silent;
    EXPECT_EQ(udp_sum(ox.out) == 0xffff, rule.corrupt_silent);
  }
}

TEST(FaultInjectorXdpTest, DuplicateRuleIsRefused) {
  COLLIDE_REQUIRE(collide::testing::missing_bpf());
  FaultRule drop;
  FaultRule dup;
  dup.id = 42;
  dup.action = Action::kDuplicate;
  auto f = armed({drop, dup});
  ASSERT_TRUE(f);
  // Refused before any interface is looked at (ifindex 0 names none).
  const Status s = f->attach_xdp(0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_NE(s.message().find("rule 42 duplicates"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace collide::injectors
