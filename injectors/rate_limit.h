#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "injectors/guardian.h"
#include "injectors/tc_link.h"  // Direction (the header needs no libbpf)

// Slow receivers and slow links: a token bucket (tbf) on an interface. Egress shapes the root
// qdisc; ingress has no queue of its own, so packets are redirected (u32 match-all + mirred) to an
// ifb device and shaped on its egress. Everything created is tagged so a sweep can find it.
namespace collide::injectors {

// Tags of what collide creates with tc and iproute2.
inline constexpr uint32_t kCollideQdiscMajor = 0xc011;      // qdisc handle "c011:"
inline constexpr const char* kCollideQdiscHandle = "c011:";
inline constexpr uint32_t kCollideFilterPref = 0xc011;      // u32 redirect filter priority
inline constexpr std::string_view kCollideIfbPrefix = "collide-ifb";  // + a number

// Rates and sizes are read with parse_rate()/parse_size() of injectors/fault_rules.h, the same
// text forms as every other collide fault.
// A bucket of 10 ms of traffic at `rate_bps`: at least 32 KiB, at most 64 MiB.
uint64_t default_burst(uint64_t rate_bps);

struct RateLimitSpec {
  uint64_t rate_bps = 0;
  uint64_t burst_bytes = 0;  // 0: default_burst(rate_bps)
  Direction direction = Direction::kEgress;
};

// The tbf arguments after "tbf" (pure, for tests).
std::vector<std::string> tbf_args(const RateLimitSpec& spec);

// Where an egress tbf goes, from `tc -j qdisc show dev X`: "root" in place of the kernel's
// default qdisc, or under someone else's root tbf ("8001:1"); an error for any other root qdisc
// or one of collide's own.
Result<std::string> egress_parent(const std::string& qdisc_json);

// The first collide-ifb<N> name not in `existing`.
std::string next_ifb_name(const std::vector<std::string>& existing);

class RateLimit {
 public:
  // Shapes `ifname` (in `netns`, "" = here) until remove() or destruction. Each change is
  // registered with the guardian before it is made.
  static Result<std::unique_ptr<RateLimit>> apply(Guardian& guardian, const std::string& netns,
                                                  const std::string& ifname,
                                                  const RateLimitSpec& spec);
  ~RateLimit();
  RateLimit(const RateLimit&) = delete;
  RateLimit& operator=(const RateLimit&) = delete;

  void remove();
  // The ifb device carrying ingress traffic ("" for egress).
  const std::string& ifb() const { return ifb_; }
  uint64_t burst_bytes() const { return burst_; }

 private:
  RateLimit(Guardian& guardian) : guardian_(guardian) {}
  Status apply_egress(const std::string& netns, const std::string& ifname,
                      const RateLimitSpec& spec);
  Status apply_ingress(const std::string& netns, const std::string& ifname,
                       const RateLimitSpec& spec);

  Guardian& guardian_;
  std::vector<uint64_t> undo_ids_;
  std::string ifb_;
  uint64_t burst_ = 0;
};

}  // namespace collide::injectors
