#pragma once

#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ebpf/fault_maps.h"

// The fault model of the eBPF fault injector (ebpf/fault.bpf.c): rules as people write them,
// parsers for the text forms the `collide inject` command takes, and the encoding into the map
// layouts of ebpf/fault_maps.h. Pure: no clocks, no BPF, no root.
namespace collide::injectors {

// An IPv4 or IPv6 prefix, kept as IPv6 (IPv4 as ::ffff:a.b.c.d) so one match covers both.
struct IpPrefix {
  std::array<uint8_t, 16> address{};
  int length = 0;  // bits of the 128-bit (mapped) address that must match
};

struct PortRange {
  uint16_t lo = 0;
  uint16_t hi = 65535;
};

struct U32Range {
  uint32_t lo = 0;
  uint32_t hi = 0xffffffff;
};

// Times relative to the moment the injector is armed; zero `end` leaves the window open.
struct TimeWindow {
  std::chrono::nanoseconds start{0};
  std::chrono::nanoseconds end{0};
};

struct FaultMatch {
  int ifindex = 0;          // 0: any
  uint8_t directions = 0;   // COLLIDE_FAULT_DIR_* bits; 0: both
  uint8_t l4_proto = 0;     // 0: any
  std::optional<IpPrefix> src;
  std::optional<IpPrefix> dst;
  PortRange sport;
  PortRange dport;
  std::bitset<64> dscp = std::bitset<64>().set();
  std::bitset<4> ecn = std::bitset<4>().set();
  // RoCEv2 (UDP 4791 with a BTH): set when any of the fields below is restricted.
  bool roce = false;
  std::bitset<256> opcodes = std::bitset<256>().set();
  U32Range qp{0, 0xffffff};
  U32Range psn{0, 0xffffff};
};

// Gilbert-Elliott: p good->bad, r bad->good per packet; a packet is lost with 1-k in the good
// state and 1-h in the bad one. Classic Gilbert is k = 1, h = 0.
struct GilbertParams {
  double p = 0;
  double r = 1;
  double h = 0;
  double k = 1;
};

// The 4-state model of Salsano et al. (netem's "loss state"): 1 received in a gap, 2 received in
// a burst, 3 lost in a burst, 4 isolated loss. Transitions 1->3, 1->4, 3->1, 3->2, 2->3.
struct Markov4Params {
  double p13 = 0;
  double p31 = 1;
  double p32 = 0;
  double p23 = 0;
  double p14 = 0;
};

enum class Decider { kAlways, kBernoulli, kGilbert, kMarkov4, kPsnList, kEveryNth, kPolice };
enum class Action { kDrop, kCorrupt, kDuplicate, kEcnCe };

const char* decider_name(Decider decider);
const char* action_name(Action action);

struct FaultRule {
  uint32_t id = 0;
  int priority = 0;          // lower first; equal priorities keep their order
  std::string description;   // for reports, e.g. "drop bernoulli 1%"
  FaultMatch match;
  Decider decider = Decider::kAlways;
  double probability = 0;                // kBernoulli
  GilbertParams gilbert;                 // kGilbert
  Markov4Params markov4;                 // kMarkov4
  std::vector<uint32_t> psns;            // kPsnList
  uint64_t every_nth = 0;                // kEveryNth
  uint64_t rate_bytes_per_s = 0;         // kPolice
  uint64_t burst_bytes = 0;              // kPolice
  Action action = Action::kDrop;
  bool corrupt_silent = false;           // fix the UDP/TCP checksum: only the ICRC shows it
  uint16_t corrupt_offset = 0xffff;      // byte in the L4 payload; 0xffff: its middle
  uint8_t corrupt_xor = 0xff;
  TimeWindow window;
  uint64_t seed = 0;
  bool log_events = true;
};

// Traffic that always passes, before any rule: control connections and management networks.
// ARP and other non-IP frames and IPv6 neighbour discovery always pass as well.
struct Allowlist {
  std::vector<uint16_t> tcp_ports;
  std::vector<uint16_t> udp_ports;
  std::vector<IpPrefix> prefixes;
};

// ---- Parsers of the text forms. Each error names the text it could not read. ----

// "1%", "0.01", "1e-3": a probability in [0, 1].
Result<double> parse_probability(std::string_view text);
// "10s", "200ms", "1.5s", "500us", "100ns", "2m"; a bare number is seconds.
Result<std::chrono::nanoseconds> parse_duration(std::string_view text);
// "START,END" ("2s,2.2s"; an empty or zero END is open) or "START+LENGTH" ("2s+200ms").
Result<TimeWindow> parse_window(std::string_view text);
// "10.0.0.0/8", "198.18.0.2" (a /32), "fd00::/64", "::1".
Result<IpPrefix> parse_prefix(std::string_view text);
// "4791" or "1000-2000".
Result<PortRange> parse_port_range(std::string_view text);
// "udp", "tcp", "icmp", "icmpv6" or a number.
Result<uint8_t> parse_protocol(std::string_view text);
// "p=0.01,r=0.3[,h=0][,k=1]", with an optional "gilbert:" in front.
Result<GilbertParams> parse_gilbert(std::string_view text);
// "p13=0.01[,p31=..][,p32=..][,p23=..][,p14=..]", with an optional "markov:" in front.
Result<Markov4Params> parse_markov4(std::string_view text);
// "5,9,100-120": numbers and inclusive ranges (at most 65536 values in all).
Result<std::vector<uint32_t>> parse_number_list(std::string_view text, uint32_t max_value);
// "0x06-0x0a,0x11" or names: send, write, read, ack, cnp.
Result<std::bitset<256>> parse_opcodes(std::string_view text);
// "100-200" or "7": an inclusive range of 24-bit values (QPs, PSNs).
Result<U32Range> parse_u24_range(std::string_view text);
// Rates as tc writes them: "10gbit", "100mbit", "64kbit", "1000bit" are bits per second;
// "1gbps", "10mbps", "1kbps", "500bps" are bytes per second. Returns bytes per second.
Result<uint64_t> parse_rate(std::string_view text);
// "1500", "64k", "64KiB", "1m", "1MB", in common/units.h's units (KB = 1000 bytes, KiB and tc's
// bare k = 1024 bytes).
Result<uint64_t> parse_size(std::string_view text);

// A rule that the program can run: probabilities in range, parameters the decider needs.
Status validate_rule(const FaultRule& rule);

// ---- Encoding into the BPF maps (ebpf/fault_maps.h). ----

// `armed_at_ns` is the bpf_ktime_get_ns() (CLOCK_MONOTONIC) moment windows count from.
collide_fault_rule encode_rule(const FaultRule& rule, uint64_t armed_at_ns);
Result<collide_fault_allowlist> encode_allowlist(const Allowlist& allow);
// Probability p as the 64-bit threshold the program compares 32-bit draws against.
uint64_t probability_threshold(double p);
// The prefix's mask and network in the map's form.
collide_fault_prefix encode_prefix(const std::optional<IpPrefix>& prefix);
// Rules in evaluation order (by priority, stable).
std::vector<FaultRule> in_priority_order(std::vector<FaultRule> rules);

}  // namespace collide::injectors
