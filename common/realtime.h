#pragma once

#include <string>

// Threads that keep time for the fabric (a switch's PFC loop, a storm's schedule) beside the
// replays' engines, which poll every core: at the lowest real-time priority their wake-ups come
// on time instead of after the engines' time slices. They sleep between short bursts of work, so
// they take the engines almost nothing (and the kernel's real-time throttling bounds them).
namespace collide::realtime {

// Moves the calling thread to SCHED_FIFO at its lowest priority. Without the privilege it stays as
// it is and the log says so (debug): `who` names the thread there.
void lowest_realtime_priority(const std::string& who);

}  // namespace collide::realtime
