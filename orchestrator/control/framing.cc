#include "orchestrator/control/framing.h"

#include <fmt/format.h>

namespace collide::orchestrator::control {
namespace {

constexpr size_t kHeaderBytes = 4;

uint32_t read_length(std::string_view header) {
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(header[i])); };
  return byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
}

}  // namespace

Result<std::string> encode_frame(std::string_view payload) {
  if (payload.size() > kMaxFrameBytes) {
    return invalid_argument(fmt::format("a control message of {} bytes is above the limit of {}",
                                        payload.size(), kMaxFrameBytes));
  }
  const auto n = static_cast<uint32_t>(payload.size());
  std::string frame;
  frame.reserve(kHeaderBytes + payload.size());
  frame.push_back(static_cast<char>(n >> 24));
  frame.push_back(static_cast<char>(n >> 16));
  frame.push_back(static_cast<char>(n >> 8));
  frame.push_back(static_cast<char>(n));
  frame.append(payload);
  return frame;
}

Status FrameDecoder::feed(std::string_view bytes) {
  if (!error_.ok()) return error_;
  buffer_.append(bytes);
  size_t pos = 0;
  while (buffer_.size() - pos >= kHeaderBytes) {
    const uint32_t length = read_length(std::string_view(buffer_).substr(pos, kHeaderBytes));
    if (length > kMaxFrameBytes) {
      error_ = data_loss(fmt::format("control frame of {} bytes announced; the limit is {}",
                                     length, kMaxFrameBytes));
      return error_;
    }
    if (buffer_.size() - pos - kHeaderBytes < length) break;
    frames_.push_back(buffer_.substr(pos + kHeaderBytes, length));
    pos += kHeaderBytes + length;
  }
  buffer_.erase(0, pos);
  return {};
}

std::string FrameDecoder::next() {
  std::string frame = std::move(frames_.front());
  frames_.pop_front();
  return frame;
}

}  // namespace collide::orchestrator::control
