#pragma once

#include <cstdint>

#include "replayer/backend/packet_port.h"

// Frame buffers on the heap for the in-memory ports of the engine's tests.
namespace collide::replayer::engine::testing_frames {

inline backend::Frame allocate(uint32_t capacity) {
  auto* buf = new uint8_t[capacity];
  return backend::Frame{buf, 0, capacity, buf};
}

inline void free(backend::Frame& f) {
  delete[] static_cast<uint8_t*>(f.handle);
  f = {};
}

}  // namespace collide::replayer::engine::testing_frames
