#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <google/protobuf/message_lite.h>

#include "common/result.h"
#include "orchestrator/control/framing.h"

// Protobuf messages over a file descriptor (one end of a socket pair), framed as on the control
// channel. The agent and its replay child each hold one end.
namespace collide::orchestrator::replay {

class FramedStream {
 public:
  explicit FramedStream(int fd) : fd_(fd) {}  // does not take ownership

  Status send(const google::protobuf::MessageLite& message);
  // The next message, nullopt when none came within `timeout` (0: only what is there already);
  // an error when the other end closed or sent something that does not parse.
  template <typename T>
  Result<std::optional<T>> receive(std::chrono::milliseconds timeout) {
    auto frame = receive_frame(timeout);
    if (!frame.ok()) return frame.status();
    if (!frame->has_value()) return std::optional<T>();
    T message;
    if (!message.ParseFromString(**frame)) return data_loss("a replay message that does not parse");
    return std::optional<T>(std::move(message));
  }

 private:
  Result<std::optional<std::string>> receive_frame(std::chrono::milliseconds timeout);

  int fd_;
  control::FrameDecoder decoder_;
};

}  // namespace collide::orchestrator::replay
