#pragma once

#include <cstdint>

#include "common/result.h"
#include "replayer/transport/packet.h"

// DCQCN (Zhu et al., SIGCOMM 2015), the sender side of RoCEv2 congestion control: a CNP cuts the
// rate by alpha/2 and raises alpha; without CNPs alpha decays, and the rate climbs back through
// fast recovery, additive and hyper increase, driven by a timer and a byte counter.
namespace collide::replayer::transport {

// The line rate the default parameters below are meant for.
inline constexpr double kDcqcnReferenceGbps = 100.0;

// Defaults: the parameters of the DCQCN authors' simulator, for a 100 Gb/s NIC.
struct DcqcnConfig {
  bool enabled = false;
  double line_rate_gbps = kDcqcnReferenceGbps;
  Nanos cnp_interval_ns = 50'000;         // the receiver's: at most one CNP per QP per interval
  double min_rate_gbps = 0.1;
  double g = 1.0 / 256;                   // alpha's gain
  Nanos alpha_update_ns = 55'000;         // alpha decays once per period without a CNP
  Nanos rate_increase_ns = 60'000;        // the rate timer
  uint64_t byte_counter_bytes = 300'000;  // the byte counter
  uint32_t fast_recovery_steps = 5;
  double additive_increase_gbps = 0.04;   // 40 Mb/s
  double hyper_increase_gbps = 0.2;       // 200 Mb/s
};

Status validate(const DcqcnConfig& config);

// `config` for a NIC of `line_rate_gbps`, with the dynamics it has at the reference rate: time
// runs slower by reference / line rate (the CNP interval, the alpha and rate timers), the rate
// steps shrink by the same factor, the byte counter stays (bytes take that much longer). A
// shaped 0.25 Gb/s link sends a packet in 400x the time a 100 Gb/s one does: with the 100 Gb/s
// timers its QPs would climb back to line rate between two CNPs, and its 40 Mb/s additive step
// would be a sixth of the line rate.
DcqcnConfig scaled_to_line_rate(DcqcnConfig config, double line_rate_gbps);

class Dcqcn {
 public:
  Dcqcn(DcqcnConfig config, Nanos now);

  void on_cnp(Nanos now);
  void on_bytes_sent(uint64_t bytes, Nanos now);
  // Runs the alpha and rate timers up to `now`.
  void on_time(Nanos now);

  double rate_gbps() const { return current_gbps_; }
  double target_gbps() const { return target_gbps_; }
  double alpha() const { return alpha_; }

 private:
  void increase();

  DcqcnConfig config_;
  double current_gbps_;
  double target_gbps_;
  double alpha_ = 1.0;
  Nanos next_alpha_update_;
  Nanos next_rate_increase_;
  bool cnp_in_period_ = false;
  uint64_t bytes_since_step_ = 0;
  uint32_t timer_steps_ = 0;
  uint32_t byte_steps_ = 0;
};

}  // namespace collide::replayer::transport
