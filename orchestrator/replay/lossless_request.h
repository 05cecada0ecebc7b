#pragma once

#include "collide/replay.pb.h"
#include "orchestrator/testbed/pfc_settings.h"
#include "replayer/engine/pfc_sender.h"

// Lossless receive on its way to the engines: a lossless testbed's host settings (or their
// defaults, for `collide replay --lossless`) into ReplayRequest.lossless, and a request's into
// the engine's LosslessConfig.
namespace collide::orchestrator::replay {

// The host NICs' side of `pfc` (resolve_pfc): priority, xoff/xon frames and quanta.
v1::LosslessReceive lossless_receive(const testbed::ResolvedPfc& pfc);

// Off unless the request has `lossless`; its numbers as they are (the engine checks them).
replayer::engine::LosslessConfig lossless_config(const v1::ReplayRequest& request);

}  // namespace collide::orchestrator::replay
