#pragma once

#include <string>

#include "collide/scenario.pb.h"
#include "common/result.h"
#include "injectors/pfc_storm.h"

// A PFC storm fault's frames as injectors/pfc_storm.h sends them, worked out in one place for the
// scenario check and for arming: its priorities (empty: the injector's default, priority 3; a
// loaded scenario has the testbed's lossless priority filled in), quanta (0: 65535), rate (0: the
// injector's default) and its window's duration.
namespace collide::orchestrator::faults {

// The options, or why they cannot be sent; `bad_field`, if given, then names the fault's field at
// fault ("pfc_priorities", "pfc_quanta", "pfc_frames_per_second" or "duration_ns").
Result<injectors::PfcStormOptions> storm_options(const v1::Fault& fault, std::string* bad_field = nullptr);

}  // namespace collide::orchestrator::faults
