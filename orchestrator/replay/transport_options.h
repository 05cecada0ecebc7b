#pragma once

#include <optional>
#include <string>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "replayer/collectives/expander.h"
#include "replayer/transport/dcqcn.h"
#include "replayer/transport/qp_config.h"

// The one place a scenario's TransportSettings become the replayer's options. `collide plan`,
// `collide replay` (by hand or as an agent's child) and `collide run` all go through it, so a
// field left at 0 means the same default everywhere; the defaults are the constants below, and
// scenario.proto's comments quote them.
namespace collide::orchestrator::replay {

struct TransportDefaults {
  static constexpr uint32_t kMtuBytes = 1024;
  static constexpr uint32_t kChannels = 2;
  static constexpr uint32_t kQpsPerConnection = 1;
  // NCCL's ring step: a 4 MiB buffer in 8 steps.
  static constexpr uint64_t kSliceBytes = 512 * 1024;
  // NCCL_IB_TIMEOUT 14 (67 ms per attempt): a testbed's RTTs are microseconds, NCCL's 20 (4.3 s)
  // would make every lost tail packet cost seconds.
  static constexpr uint32_t kTimeoutExponent = 14;
  static constexpr double kTimeoutScale = 1.0;
  static constexpr uint32_t kRetryCount = 7;  // NCCL_IB_RETRY_CNT
  static constexpr uint32_t kAckEvery = 16;
  static constexpr uint32_t kMaxOutstanding = 256;
  // Out-of-order recovery: longer than the skew of a sprayed fabric's paths, short against NCCL's
  // timeout; more packets than such a skew holds at a testbed's rates.
  static constexpr uint64_t kReorderWindowNs = 20'000;
  static constexpr uint32_t kReorderPackets = 64;
  // NCCL_IB_TC 106: DSCP 26 (AF31), which switches' DSCP / 8 mapping puts in priority 3.
  static constexpr uint32_t kDscp = 26;
  // Flags need no entry: their unset false is the default (pxn_disable false: PXN on, as NCCL).
};

struct TransportOptions {
  replayer::transport::QpConfig qp;
  replayer::transport::DcqcnConfig dcqcn;
  replayer::collectives::ExpandOptions expand;
  uint8_t dscp = TransportDefaults::kDscp;
};

// Fills every unset (zero) field with its default and checks the result; an error names the field
// ("transport.mtu_bytes: ...").
Result<TransportOptions> resolve_transport(const v1::TransportSettings& settings);

// Why resolve_transport would refuse `settings`: the field (of TransportSettings; empty when only
// fields together are wrong) and what is wrong with it; nothing when they resolve.
struct TransportProblem {
  std::string field;
  std::string what;
};
std::optional<TransportProblem> transport_problem(const v1::TransportSettings& settings);

// The settings with every default written out (what a report or `plan --json` shows).
v1::TransportSettings with_defaults(const v1::TransportSettings& settings);

}  // namespace collide::orchestrator::replay
