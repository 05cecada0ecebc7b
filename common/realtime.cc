#include "common/realtime.h"

#include <pthread.h>
#include <sched.h>

#include <cstring>

#include "common/logging.h"

namespace collide::realtime {

void lowest_realtime_priority(const std::string& who) {
  const sched_param lowest{sched_get_priority_min(SCHED_FIFO)};
  if (int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &lowest); err != 0) {
    logging::get("realtime")->debug("{}: no real-time priority ({})", who, std::strerror(err));
  }
}

}  // namespace collide::realtime
