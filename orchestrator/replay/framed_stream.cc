#include "orchestrator/replay/framed_stream.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

namespace collide::orchestrator::replay {

Status FramedStream::send(const google::protobuf::MessageLite& message) {
  auto frame = control::encode_frame(message.SerializeAsString());
  if (!frame.ok()) return frame.status();
  size_t sent = 0;
  while (sent < frame->size()) {
    // MSG_NOSIGNAL: a peer that died is an error here, not a SIGPIPE that ends this process.
    const ssize_t n = ::send(fd_, frame->data() + sent, frame->size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unavailable(fmt::format("sending to the replay's other end: {}", std::strerror(errno)));
    sent += static_cast<size_t>(n);
  }
  return {};
}

Result<std::optional<std::string>> FramedStream::receive_frame(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!decoder_.has_frame()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return unavailable(fmt::format("waiting for the replay's other end: {}", std::strerror(errno)));
    if (ready == 0) return std::optional<std::string>();
    char buffer[64 * 1024];
    const ssize_t n = ::read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unavailable(fmt::format("reading from the replay's other end: {}", std::strerror(errno)));
    if (n == 0) return unavailable("the replay's other end closed");
    COLLIDE_RETURN_IF_ERROR(decoder_.feed(std::string_view(buffer, static_cast<size_t>(n))));
  }
  return std::optional<std::string>(decoder_.next());
}

}  // namespace collide::orchestrator::replay
