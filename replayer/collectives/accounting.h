#pragma once

#include "traces/analysis/traffic_model.h"

// Closed-form traffic of each collective, the yardstick the expansion is checked against and the
// figures `collide plan` and reports print. The formulas live with the trace analysis
// (traces/analysis/traffic_model.h), which `collide trace stats` shares without depending on the
// replayer; these names forward to them.
namespace collide::replayer::collectives {

// Bytes all ranks of an n-rank communicator send in total for one op (Op.bytes meaning), for the
// algorithms collide expands: e.g. ring or tree all-reduce 2(n-1)·S, all-gather (n-1)·n·c.
using traces::analysis::total_sent_bytes;

// nccl-tests' size S of an op: all-gather, reduce-scatter, all-to-all, gather, scatter use n x
// the per-rank chunk.
using traces::analysis::nccl_tests_size;

// nccl-tests' bus bandwidth factor: busbw = algbw x factor.
using traces::analysis::busbw_factor;

}  // namespace collide::replayer::collectives
