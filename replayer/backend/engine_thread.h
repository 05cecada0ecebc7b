#pragma once

#include "common/result.h"

namespace collide::replayer::backend {

// Makes the calling thread, which an engine started for itself (one per NIC), fit to drive DPDK
// ports: it gets an lcore id, and so its own mempool caches (dpdk::register_current_thread).
// Nothing to do when no DPDK port is open in this process or the build is without DPDK. Call
// unregister_engine_thread before the thread ends.
Status register_engine_thread();
void unregister_engine_thread();

}  // namespace collide::replayer::backend
