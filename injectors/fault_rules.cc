#include "injectors/fault_rules.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "common/units.h"

namespace collide::injectors {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t pos = text.find(sep, start);
    parts.push_back(trim(text.substr(start, pos == std::string_view::npos ? pos : pos - start)));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

// A finite number followed by a unit (possibly empty), e.g. "1.5" "ms".
struct NumberWithUnit {
  double value = 0;
  std::string unit;
};

Result<NumberWithUnit> number_with_unit(std::string_view text, std::string_view what) {
  const std::string s(trim(text));
  if (s.empty()) return invalid_argument(fmt::format("empty {}", what));
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || errno != 0 || !std::isfinite(v)) {
    return invalid_argument(fmt::format("'{}' is not a {}", s, what));
  }
  return NumberWithUnit{v, lower(trim(std::string_view(end)))};
}

Result<uint64_t> parse_unsigned(std::string_view text, uint64_t max_value, std::string_view what) {
  const std::string_view s = trim(text);
  // Decimal, or hexadecimal after "0x" (opcodes and QP numbers are often written so).
  const bool hex = s.starts_with("0x") || s.starts_with("0X");
  auto read = parse_number<uint64_t>(s, what, hex ? 16 : 10);
  if (!read.ok()) return read.status();
  const uint64_t v = *read;
  if (v > max_value) {
    return invalid_argument(fmt::format("{} {} is above the largest, {}", what, s, max_value));
  }
  return static_cast<uint64_t>(v);
}

// "key=value,key=value" into probabilities.
Status parse_params(std::string_view text, std::string_view model,
                    const std::vector<std::pair<std::string_view, double*>>& keys) {
  for (std::string_view part : split(text, ',')) {
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return invalid_argument(fmt::format("{} parameter '{}' is not key=value", model, part));
    }
    const std::string key = lower(trim(part.substr(0, eq)));
    auto it = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first == key; });
    if (it == keys.end()) {
      std::string known;
      for (const auto& k : keys) known += (known.empty() ? "" : ", ") + std::string(k.first);
      return invalid_argument(
          fmt::format("{} has no parameter '{}' (it has {})", model, key, known));
    }
    auto p = parse_probability(part.substr(eq + 1));
    if (!p.ok()) return p.status().with_context(fmt::format("{} parameter {}", model, key));
    *it->second = *p;
  }
  return {};
}

std::string_view strip_prefix(std::string_view text, std::string_view prefix) {
  const std::string head = lower(text.substr(0, prefix.size()));
  if (head == prefix) text.remove_prefix(prefix.size());
  return text;
}

Status check_probability(double p, std::string_view what) {
  if (!(p >= 0 && p <= 1)) return invalid_argument(fmt::format("{} {} is not within 0..1", what, p));
  return {};
}

}  // namespace

const char* decider_name(Decider decider) {
  switch (decider) {
    case Decider::kAlways: return "always";
    case Decider::kBernoulli: return "bernoulli";
    case Decider::kGilbert: return "gilbert";
    case Decider::kMarkov4: return "markov4";
    case Decider::kPsnList: return "psn-list";
    case Decider::kEveryNth: return "every-nth";
    case Decider::kPolice: return "police";
  }
  return "?";
}

const char* action_name(Action action) {
  switch (action) {
    case Action::kDrop: return "drop";
    case Action::kCorrupt: return "corrupt";
    case Action::kDuplicate: return "duplicate";
    case Action::kEcnCe: return "ecn-ce";
  }
  return "?";
}

Result<double> parse_probability(std::string_view text) {
  auto n = number_with_unit(text, "probability");
  if (!n.ok()) return n.status();
  double p = n->value;
  if (n->unit == "%") {
    p /= 100;
  } else if (!n->unit.empty()) {
    return invalid_argument(fmt::format("'{}' is not a probability (like 0.01 or 1%)", trim(text)));
  }
  if (!(p >= 0 && p <= 1)) {
    return invalid_argument(fmt::format("probability '{}' is not within 0..1", trim(text)));
  }
  return p;
}

Result<std::chrono::nanoseconds> parse_duration(std::string_view text) {
  auto n = number_with_unit(text, "duration");
  if (!n.ok()) return n.status();
  double scale = 0;
  if (n->unit.empty() || n->unit == "s") scale = 1e9;
  else if (n->unit == "ms") scale = 1e6;
  else if (n->unit == "us") scale = 1e3;
  else if (n->unit == "ns") scale = 1;
  else if (n->unit == "m" || n->unit == "min") scale = 60e9;
  else if (n->unit == "h") scale = 3600e9;
  else return invalid_argument(fmt::format("duration '{}' has an unknown unit '{}' (ns, us, ms, s, m, h)", trim(text), n->unit));
  const double ns = n->value * scale;
  if (!(ns >= 0) || ns > 1e18) {
    return invalid_argument(fmt::format("duration '{}' is negative or too long", trim(text)));
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(ns)));
}

Result<TimeWindow> parse_window(std::string_view text) {
  TimeWindow w;
  const size_t plus = text.find('+');
  const size_t comma = text.find(',');
  if (plus != std::string_view::npos) {
    auto start = parse_duration(text.substr(0, plus));
    if (!start.ok()) return start.status().with_context("window start");
    auto length = parse_duration(text.substr(plus + 1));
    if (!length.ok()) return length.status().with_context("window length");
    if (length->count() == 0) return invalid_argument("window length must be above zero");
    w.start = *start;
    w.end = *start + *length;
    return w;
  }
  if (comma == std::string_view::npos) {
    return invalid_argument(fmt::format("window '{}' is not START,END or START+LENGTH", text));
  }
  auto start = parse_duration(text.substr(0, comma));
  if (!start.ok()) return start.status().with_context("window start");
  w.start = *start;
  const std::string_view end_text = trim(text.substr(comma + 1));
  if (!end_text.empty()) {
    auto end = parse_duration(end_text);
    if (!end.ok()) return end.status().with_context("window end");
    w.end = *end;
    if (w.end.count() != 0 && w.end <= w.start) {
      return invalid_argument(fmt::format("window '{}' ends before it starts", text));
    }
  }
  return w;
}

Result<IpPrefix> parse_prefix(std::string_view text) {
  const std::string s(trim(text));
  const size_t slash = s.find('/');
  const std::string addr = s.substr(0, slash);
  IpPrefix p;
  int max_len = 0;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, addr.c_str(), &v4) == 1) {
    p.address[10] = 0xff;
    p.address[11] = 0xff;
    std::memcpy(&p.address[12], &v4, 4);
    max_len = 32;
  } else if (inet_pton(AF_INET6, addr.c_str(), &v6) == 1) {
    std::memcpy(p.address.data(), &v6, 16);
    max_len = 128;
  } else {
    return invalid_argument(fmt::format("'{}' is not an IPv4 or IPv6 address or prefix", s));
  }
  int len = max_len;
  if (slash != std::string::npos) {
    auto l = parse_unsigned(std::string_view(s).substr(slash + 1), static_cast<uint64_t>(max_len),
                            "prefix length");
    if (!l.ok()) return l.status().with_context(fmt::format("prefix '{}'", s));
    len = static_cast<int>(*l);
  }
  p.length = max_len == 32 ? 96 + len : len;
  return p;
}

Result<PortRange> parse_port_range(std::string_view text) {
  const size_t dash = text.find('-');
  auto lo = parse_unsigned(text.substr(0, dash), 65535, "port");
  if (!lo.ok()) return lo.status();
  PortRange r{static_cast<uint16_t>(*lo), static_cast<uint16_t>(*lo)};
  if (dash != std::string_view::npos) {
    auto hi = parse_unsigned(text.substr(dash + 1), 65535, "port");
    if (!hi.ok()) return hi.status();
    r.hi = static_cast<uint16_t>(*hi);
  }
  if (r.hi < r.lo) return invalid_argument(fmt::format("port range '{}' is empty", text));
  return r;
}

Result<uint8_t> parse_protocol(std::string_view text) {
  const std::string s = lower(trim(text));
  if (s == "udp") return static_cast<uint8_t>(17);
  if (s == "tcp") return static_cast<uint8_t>(6);
  if (s == "icmp") return static_cast<uint8_t>(1);
  if (s == "icmpv6" || s == "icmp6") return static_cast<uint8_t>(58);
  auto n = parse_unsigned(s, 255, "protocol");
  if (!n.ok() || *n == 0) {
    return invalid_argument(fmt::format("'{}' is not a protocol (udp, tcp, icmp, icmpv6, 1..255)", s));
  }
  return static_cast<uint8_t>(*n);
}

Result<GilbertParams> parse_gilbert(std::string_view text) {
  GilbertParams g;
  bool have_p = false;
  bool have_r = false;
  text = strip_prefix(trim(text), "gilbert:");
  for (std::string_view part : split(text, ',')) {
    const std::string key = lower(trim(part.substr(0, part.find('='))));
    have_p |= key == "p";
    have_r |= key == "r";
  }
  COLLIDE_RETURN_IF_ERROR(parse_params(text, "gilbert",
                                       {{"p", &g.p}, {"r", &g.r}, {"h", &g.h}, {"k", &g.k}}));
  if (!have_p || !have_r) return invalid_argument("gilbert needs p=.. and r=.. (h, k optional)");
  if (g.r == 0) return invalid_argument("gilbert r=0 never leaves the bad state");
  return g;
}

Result<Markov4Params> parse_markov4(std::string_view text) {
  Markov4Params m;
  text = strip_prefix(trim(text), "markov:");
  text = strip_prefix(text, "burst:");
  COLLIDE_RETURN_IF_ERROR(parse_params(text, "markov", {{"p13", &m.p13}, {"p31", &m.p31},
                                                        {"p32", &m.p32}, {"p23", &m.p23},
                                                        {"p14", &m.p14}}));
  if (m.p13 + m.p14 > 1) return invalid_argument("markov p13 + p14 is above 1");
  if (m.p31 + m.p32 > 1) return invalid_argument("markov p31 + p32 is above 1");
  return m;
}

Result<std::vector<uint32_t>> parse_number_list(std::string_view text, uint32_t max_value) {
  constexpr size_t kMaxValues = 65536;
  std::vector<uint32_t> out;
  for (std::string_view part : split(text, ',')) {
    const size_t dash = part.find('-');
    auto lo = parse_unsigned(part.substr(0, dash), max_value, "number");
    if (!lo.ok()) return lo.status();
    uint64_t hi = *lo;
    if (dash != std::string_view::npos) {
      auto h = parse_unsigned(part.substr(dash + 1), max_value, "number");
      if (!h.ok()) return h.status();
      hi = *h;
      if (hi < *lo) return invalid_argument(fmt::format("range '{}' is empty", part));
    }
    if (out.size() + (hi - *lo + 1) > kMaxValues) {
      return invalid_argument(fmt::format("list '{}' has more than {} values", text, kMaxValues));
    }
    for (uint64_t v = *lo; v <= hi; ++v) out.push_back(static_cast<uint32_t>(v));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::bitset<256>> parse_opcodes(std::string_view text) {
  std::bitset<256> set;
  for (std::string_view part : split(text, ',')) {
    const std::string name = lower(part);
    auto add_range = [&](unsigned lo, unsigned hi) {
      for (unsigned o = lo; o <= hi; ++o) set.set(o);
    };
    if (name == "send") add_range(0x00, 0x05);
    else if (name == "write") add_range(0x06, 0x0b);
    else if (name == "read") add_range(0x0c, 0x10);
    else if (name == "ack") add_range(0x11, 0x11);
    else if (name == "cnp") add_range(0x81, 0x81);
    else {
      const size_t dash = part.find('-');
      auto lo = parse_unsigned(part.substr(0, dash), 255, "BTH opcode");
      if (!lo.ok()) {
        return invalid_argument(fmt::format(
            "'{}' is not an opcode, range or name (send, write, read, ack, cnp)", part));
      }
      uint64_t hi = *lo;
      if (dash != std::string_view::npos) {
        auto h = parse_unsigned(part.substr(dash + 1), 255, "BTH opcode");
        if (!h.ok()) return h.status();
        hi = *h;
      }
      if (hi < *lo) return invalid_argument(fmt::format("opcode range '{}' is empty", part));
      add_range(static_cast<unsigned>(*lo), static_cast<unsigned>(hi));
    }
  }
  return set;
}

Result<U32Range> parse_u24_range(std::string_view text) {
  const size_t dash = text.find('-');
  auto lo = parse_unsigned(text.substr(0, dash), 0xffffff, "24-bit value");
  if (!lo.ok()) return lo.status();
  U32Range r{static_cast<uint32_t>(*lo), static_cast<uint32_t>(*lo)};
  if (dash != std::string_view::npos) {
    auto hi = parse_unsigned(text.substr(dash + 1), 0xffffff, "24-bit value");
    if (!hi.ok()) return hi.status();
    r.hi = static_cast<uint32_t>(*hi);
  }
  if (r.hi < r.lo) return invalid_argument(fmt::format("range '{}' is empty", text));
  return r;
}

Result<uint64_t> parse_rate(std::string_view text) {
  auto n = number_with_unit(text, "rate");
  if (!n.ok()) return n.status();
  double bytes_per_s = 0;
  const std::string& u = n->unit;
  if (u == "bit") bytes_per_s = n->value / 8;
  else if (u == "kbit") bytes_per_s = n->value * 1e3 / 8;
  else if (u == "mbit") bytes_per_s = n->value * 1e6 / 8;
  else if (u == "gbit") bytes_per_s = n->value * 1e9 / 8;
  else if (u == "tbit") bytes_per_s = n->value * 1e12 / 8;
  else if (u == "bps") bytes_per_s = n->value;
  else if (u == "kbps") bytes_per_s = n->value * 1e3;
  else if (u == "mbps") bytes_per_s = n->value * 1e6;
  else if (u == "gbps") bytes_per_s = n->value * 1e9;
  else {
    return invalid_argument(fmt::format(
        "rate '{}' needs a unit: bit, kbit, mbit, gbit, tbit (bits/s) or bps, kbps, mbps, gbps "
        "(bytes/s)", trim(text)));
  }
  if (!(bytes_per_s >= 1) || bytes_per_s > 1e13) {
    return invalid_argument(fmt::format("rate '{}' is not between 1 byte/s and 80 Tbit/s", trim(text)));
  }
  return static_cast<uint64_t>(std::llround(bytes_per_s));
}

Result<uint64_t> parse_size(std::string_view text) {
  auto n = number_with_unit(text, "size");
  if (!n.ok()) return n.status();
  // The units and their meaning are common/units.h's: KB = 1000 B as in a scenario, KiB and tc's
  // bare k = 1024 B.
  const auto scale = units::bytes_per_unit(n->unit);
  if (!scale) {
    return invalid_argument(fmt::format("size '{}' has an unknown unit '{}' (B, KB, KiB, MB, MiB, GB, GiB; k, m, g as tc)",
                                        trim(text), n->unit));
  }
  const double bytes = n->value * *scale;
  if (!(bytes >= 1) || bytes > 1e12) {
    return invalid_argument(fmt::format("size '{}' is not between 1 byte and 1 TB", trim(text)));
  }
  return static_cast<uint64_t>(std::llround(bytes));
}

Status validate_rule(const FaultRule& rule) {
  const std::string what = fmt::format("rule {}", rule.id);
  switch (rule.decider) {
    case Decider::kAlways:
      break;
    case Decider::kBernoulli:
      COLLIDE_RETURN_IF_ERROR(check_probability(rule.probability, what + " probability"));
      break;
    case Decider::kGilbert:
      for (double p : {rule.gilbert.p, rule.gilbert.r, rule.gilbert.h, rule.gilbert.k}) {
        COLLIDE_RETURN_IF_ERROR(check_probability(p, what + " gilbert parameter"));
      }
      break;
    case Decider::kMarkov4: {
      const Markov4Params& m = rule.markov4;
      for (double p : {m.p13, m.p31, m.p32, m.p23, m.p14}) {
        COLLIDE_RETURN_IF_ERROR(check_probability(p, what + " markov parameter"));
      }
      if (m.p13 + m.p14 > 1 || m.p31 + m.p32 > 1) {
        return invalid_argument(what + ": markov p13+p14 and p31+p32 must not exceed 1");
      }
      break;
    }
    case Decider::kPsnList:
      if (rule.psns.empty()) return invalid_argument(what + ": the PSN list is empty");
      for (uint32_t psn : rule.psns) {
        if (psn > 0xffffff) return invalid_argument(fmt::format("{}: PSN {} is above 24 bits", what, psn));
      }
      break;
    case Decider::kEveryNth:
      if (rule.every_nth == 0) return invalid_argument(what + ": every Nth needs N >= 1");
      break;
    case Decider::kPolice:
      if (rule.rate_bytes_per_s == 0 || rule.burst_bytes == 0) {
        return invalid_argument(what + ": policing needs a rate and a burst above zero");
      }
      if (rule.rate_bytes_per_s > 10'000'000'000'000ULL || rule.burst_bytes > 1'000'000'000'000ULL) {
        return invalid_argument(what + ": policing rate or burst too large");
      }
      break;
  }
  if (rule.action == Action::kCorrupt && rule.corrupt_xor == 0) {
    return invalid_argument(what + ": corrupting with XOR 0 changes nothing");
  }
  if (rule.window.end.count() != 0 && rule.window.end <= rule.window.start) {
    return invalid_argument(what + ": its window ends before it starts");
  }
  return {};
}

uint64_t probability_threshold(double p) {
  if (!(p > 0)) return 0;
  if (p >= 1) return uint64_t{1} << 32;
  return static_cast<uint64_t>(std::llround(std::ldexp(p, 32)));
}

collide_fault_prefix encode_prefix(const std::optional<IpPrefix>& prefix) {
  collide_fault_prefix out{};
  if (!prefix) return out;  // all-zero mask: anything
  std::array<uint8_t, 16> mask{};
  for (int bit = 0; bit < prefix->length && bit < 128; ++bit) {
    mask[static_cast<size_t>(bit / 8)] |= static_cast<uint8_t>(0x80u >> (bit % 8));
  }
  std::array<uint8_t, 16> net{};
  for (size_t i = 0; i < 16; ++i) net[i] = prefix->address[i] & mask[i];
  std::memcpy(out.net, net.data(), 16);
  std::memcpy(out.mask, mask.data(), 16);
  return out;
}

collide_fault_rule encode_rule(const FaultRule& rule, uint64_t armed_at_ns) {
  collide_fault_rule r{};
  r.id = rule.id;
  r.decider = static_cast<uint8_t>([&] {
    switch (rule.decider) {
      case Decider::kAlways: return COLLIDE_FAULT_DECIDE_ALWAYS;
      case Decider::kBernoulli: return COLLIDE_FAULT_DECIDE_BERNOULLI;
      case Decider::kGilbert: return COLLIDE_FAULT_DECIDE_GILBERT;
      case Decider::kMarkov4: return COLLIDE_FAULT_DECIDE_MARKOV4;
      case Decider::kPsnList: return COLLIDE_FAULT_DECIDE_PSN_LIST;
      case Decider::kEveryNth: return COLLIDE_FAULT_DECIDE_EVERY_NTH;
      case Decider::kPolice: return COLLIDE_FAULT_DECIDE_POLICE;
    }
    return COLLIDE_FAULT_DECIDE_ALWAYS;
  }());
  r.action = static_cast<uint8_t>([&] {
    switch (rule.action) {
      case Action::kDrop: return COLLIDE_FAULT_ACT_DROP;
      case Action::kCorrupt: return COLLIDE_FAULT_ACT_CORRUPT;
      case Action::kDuplicate: return COLLIDE_FAULT_ACT_DUPLICATE;
      case Action::kEcnCe: return COLLIDE_FAULT_ACT_ECN_CE;
    }
    return COLLIDE_FAULT_ACT_DROP;
  }());
  const FaultMatch& m = rule.match;
  if (m.roce || rule.decider == Decider::kPsnList) r.flags |= COLLIDE_FAULT_F_ROCE;
  if (rule.corrupt_silent) r.flags |= COLLIDE_FAULT_F_CORRUPT_SILENT;
  if (rule.log_events) r.flags |= COLLIDE_FAULT_F_LOG;
  r.corrupt_offset = rule.corrupt_offset;
  r.corrupt_xor = rule.corrupt_xor;
  r.seed = rule.seed;
  // A window that starts at arming is open at the start: 0 means "no bound" to the program.
  r.start_ns = rule.window.start.count() > 0
                   ? armed_at_ns + static_cast<uint64_t>(rule.window.start.count())
                   : 0;
  r.end_ns = rule.window.end.count() > 0
                 ? armed_at_ns + static_cast<uint64_t>(rule.window.end.count())
                 : 0;

  r.match.ifindex = static_cast<uint32_t>(m.ifindex);
  r.match.directions = m.directions;
  r.match.l4_proto = m.l4_proto;
  r.match.ecn_mask = static_cast<uint8_t>(m.ecn.to_ulong());
  r.match.dscp_mask = m.dscp.to_ullong();
  r.match.src = encode_prefix(m.src);
  r.match.dst = encode_prefix(m.dst);
  r.match.sport_lo = m.sport.lo;
  r.match.sport_hi = m.sport.hi;
  r.match.dport_lo = m.dport.lo;
  r.match.dport_hi = m.dport.hi;
  for (unsigned o = 0; o < 256; ++o) {
    if (m.opcodes.test(o)) r.match.opcodes[o / 64] |= uint64_t{1} << (o % 64);
  }
  r.match.qp_lo = m.qp.lo;
  r.match.qp_hi = m.qp.hi;
  r.match.psn_lo = m.psn.lo;
  r.match.psn_hi = m.psn.hi;

  r.probability = probability_threshold(rule.probability);
  r.every_nth = rule.every_nth;
  r.gilbert.p = probability_threshold(rule.gilbert.p);
  r.gilbert.r = probability_threshold(rule.gilbert.r);
  r.gilbert.loss_good = probability_threshold(1 - rule.gilbert.k);
  r.gilbert.loss_bad = probability_threshold(1 - rule.gilbert.h);
  r.markov4.p13 = probability_threshold(rule.markov4.p13);
  r.markov4.p14 = probability_threshold(rule.markov4.p14);
  r.markov4.p31 = probability_threshold(rule.markov4.p31);
  r.markov4.p32 = probability_threshold(rule.markov4.p32);
  r.markov4.p23 = probability_threshold(rule.markov4.p23);
  r.police.rate_bytes_per_s = rule.rate_bytes_per_s;
  r.police.burst_bytes = rule.burst_bytes;
  return r;
}

Result<collide_fault_allowlist> encode_allowlist(const Allowlist& allow) {
  collide_fault_allowlist a{};
  if (allow.tcp_ports.size() > COLLIDE_FAULT_MAX_ALLOW_PORTS ||
      allow.udp_ports.size() > COLLIDE_FAULT_MAX_ALLOW_PORTS) {
    return invalid_argument(fmt::format("the allowlist holds at most {} TCP and {} UDP ports",
                                        COLLIDE_FAULT_MAX_ALLOW_PORTS,
                                        COLLIDE_FAULT_MAX_ALLOW_PORTS));
  }
  if (allow.prefixes.size() > COLLIDE_FAULT_MAX_ALLOW_PREFIXES) {
    return invalid_argument(fmt::format("the allowlist holds at most {} prefixes",
                                        COLLIDE_FAULT_MAX_ALLOW_PREFIXES));
  }
  for (size_t i = 0; i < allow.tcp_ports.size(); ++i) a.tcp_ports[i] = allow.tcp_ports[i];
  for (size_t i = 0; i < allow.udp_ports.size(); ++i) a.udp_ports[i] = allow.udp_ports[i];
  for (size_t i = 0; i < allow.prefixes.size(); ++i) a.prefixes[i] = encode_prefix(allow.prefixes[i]);
  a.tcp_port_count = static_cast<uint32_t>(allow.tcp_ports.size());
  a.udp_port_count = static_cast<uint32_t>(allow.udp_ports.size());
  a.prefix_count = static_cast<uint32_t>(allow.prefixes.size());
  return a;
}

std::vector<FaultRule> in_priority_order(std::vector<FaultRule> rules) {
  std::stable_sort(rules.begin(), rules.end(),
                   [](const FaultRule& a, const FaultRule& b) { return a.priority < b.priority; });
  return rules;
}

}  // namespace collide::injectors
