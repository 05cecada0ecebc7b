#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "common/result.h"

// Messages on the control channel travel as frames: a 4-byte big-endian length, then that many
// bytes (one serialised protobuf message). TLS carries a byte stream, so the receiver needs the
// length to know where one message ends; the limit keeps a damaged or hostile length from making
// it allocate without bound.
namespace collide::orchestrator::control {

// Large enough for the trace of a big job sent whole to an agent.
inline constexpr size_t kMaxFrameBytes = size_t{512} << 20;

// The frame carrying `payload`: its length, then its bytes.
Result<std::string> encode_frame(std::string_view payload);

// Reassembles frames from bytes as they arrive, in pieces of any size.
class FrameDecoder {
 public:
  // Appends bytes; complete frames become available from next(). An error (a length above the
  // limit) is final: the stream can no longer be trusted.
  Status feed(std::string_view bytes);
  bool has_frame() const { return !frames_.empty(); }
  std::string next();  // call only when has_frame()
  size_t buffered_bytes() const { return buffer_.size(); }

 private:
  std::string buffer_;
  std::deque<std::string> frames_;
  Status error_;
};

}  // namespace collide::orchestrator::control
