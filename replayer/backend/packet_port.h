#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/result.h"
#include "replayer/wire/addresses.h"

// The one interface between the replayer's engine and the things that move frames: a
// burst-oriented packet port. The engine never knows which implementation it has: DPDK (any PMD),
// a kernel socket (AF_PACKET) for hosts without DPDK, or an in-memory link for tests.
namespace collide::replayer::backend {

// A frame buffer owned by the port. `data` holds `len` bytes of an Ethernet frame (no FCS).
struct Frame {
  uint8_t* data = nullptr;
  uint32_t len = 0;
  uint32_t capacity = 0;
  void* handle = nullptr;  // the implementation's own buffer (e.g. an rte_mbuf)
  // Ports that reuse transmit buffers remember what an encoder left in them, so the next encoder
  // can skip rewriting identical payload bytes (transport::PayloadMemo). `payload_held` is what
  // acquire found (0: unknown); an encoder that writes the frame sets `payload_written`, which
  // the port keeps with the buffer. Left at 0, as by any other writer, the buffer counts as
  // unknown.
  uint64_t payload_held = 0;
  uint64_t payload_written = 0;
};

struct PortCounters {
  uint64_t tx_frames = 0;
  uint64_t tx_bytes = 0;
  uint64_t rx_frames = 0;
  uint64_t rx_bytes = 0;
  uint64_t rx_dropped = 0;  // lost inside the port (ring full), as far as it can tell
  uint64_t tx_errors = 0;
};

class PacketPort {
 public:
  virtual ~PacketPort() = default;

  // Fills `frames` with empty buffers to build frames in; all or none.
  virtual Status acquire(std::span<Frame> frames) = 0;
  // Transmits frames (their `len` set); returns how many were taken. Taken frames belong to the
  // port again; the caller keeps the rest (to retry or release).
  virtual uint16_t submit(std::span<Frame> frames) = 0;
  // Fills `frames` with received frames; returns how many. The caller releases them.
  virtual uint16_t receive(std::span<Frame> frames) = 0;
  // Gives buffers back, received or acquired and not submitted.
  virtual void release(std::span<Frame> frames) = 0;
  // Blocks up to `timeout` until a frame may be waiting, so an idle engine does not spin. May
  // return early; returning without a frame is not an error.
  virtual void wait_for_frames(std::chrono::microseconds timeout) = 0;

  virtual wire::MacAddress mac() const = 0;
  // Largest frame a buffer holds.
  virtual uint32_t max_frame_size() const = 0;
  virtual PortCounters counters() const = 0;
  virtual std::string describe() const = 0;

  // Queue pairs a thread of its own may each drive: queue(i), for i < queue_count(), is a port
  // of its own over the i-th receive and transmit queue, with that queue's counters. A port with
  // one queue is its own only queue. One thread per queue; the port itself works on queue 0, so
  // drive either it or the views.
  virtual size_t queue_count() const { return 1; }
  virtual PacketPort& queue(size_t /*index*/) { return *this; }
};

}  // namespace collide::replayer::backend
