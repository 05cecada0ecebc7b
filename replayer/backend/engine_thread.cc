#include "replayer/backend/engine_thread.h"

#ifdef COLLIDE_HAVE_DPDK
#include "replayer/dpdk/eal.h"
#endif

namespace collide::replayer::backend {

Status register_engine_thread() {
#ifdef COLLIDE_HAVE_DPDK
  if (dpdk::eal_initialized()) return dpdk::register_current_thread();
#endif
  return {};
}

void unregister_engine_thread() {
#ifdef COLLIDE_HAVE_DPDK
  if (dpdk::eal_initialized()) dpdk::unregister_current_thread();
#endif
}

}  // namespace collide::replayer::backend
