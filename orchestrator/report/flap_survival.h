#pragma once

#include <optional>
#include <string>

#include "collide/results.pb.h"
#include "collide/scenario.pb.h"
#include "common/result.h"

// A sweep of a link flap's duration answers how long an outage the job survives; the transport's
// retry arithmetic says how long it should. Both go into sweep.json's `survival`.
namespace collide::orchestrator::report {

// How long a QP waits before it fails, from the settings as the transport resolves them (unset
// fields take their defaults; timeout_scale multiplies each wait, as the transport applies it).
struct RetryArithmetic {
  uint32_t timeout_exponent = 0;
  double timeout_scale = 0;
  uint32_t retry_count = 0;
  double timeout_ms = 0;       // per attempt: 4.096 us x 2^timeout_exponent x timeout_scale
  uint32_t attempts = 0;       // retry_count + 1
  double limit_ms = 0;         // timeout_ms x attempts
  double last_resend_ms = 0;   // timeout_ms x retry_count
};
Result<RetryArithmetic> retry_arithmetic(const v1::TransportSettings& settings);

// The survival section of a sweep whose fields include a link flap's (or a blackhole's) duration (`scenario` is any
// point's, for the faults' kinds, the variants and their transport); nothing when no swept field
// is one. The judged variant is the first that uses the flap.
std::optional<v1::SweepSurvival> flap_survival(const v1::Scenario& scenario, const v1::SweepResults& sweep);

// Whether a point's failure text (the run command's "N of M run(s) failed:" and one line per
// failed run) is only the measurement: every failed run is `variant`'s and died of exceeded retries.
bool died_as_measured(const std::string& failures, const std::string& variant);

// The section in words, for the terminal.
std::string survival_text(const v1::SweepSurvival& survival);

}  // namespace collide::orchestrator::report
