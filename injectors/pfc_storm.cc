#include "injectors/pfc_storm.h"

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "replayer/wire/pfc_frame.h"

namespace collide::injectors {
namespace {

namespace wire = replayer::wire;

// The sending rate's bounds: below one frame a minute nothing storms; above 1.5 M frames/s a
// packet socket cannot keep a schedule (and 64-byte frames at that rate fill a 1 Gb/s link).
constexpr double kMinFramesPerSecond = 1.0 / 60;
constexpr double kMaxFramesPerSecond = 1.5e6;

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void sleep_until(uint64_t at_ns) {
  const timespec ts{static_cast<time_t>(at_ns / 1'000'000'000ull),
                    static_cast<long>(at_ns % 1'000'000'000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

// A packet socket bound to `dev`, closed with the object.
class PacketSocket {
 public:
  ~PacketSocket() {
    if (fd_ >= 0) close(fd_);
  }
  Status open(const std::string& dev, wire::MacAddress& mac) {
    const unsigned index = if_nametoindex(dev.c_str());
    if (index == 0) return not_found(fmt::format("{}: no such device", dev));
    fd_ = socket(AF_PACKET, SOCK_RAW, 0);  // protocol 0: sends only, receives nothing
    if (fd_ < 0) return internal_error(fmt::format("packet socket: {}", std::strerror(errno)));
    ifreq req{};
    std::snprintf(req.ifr_name, sizeof(req.ifr_name), "%s", dev.c_str());
    if (ioctl(fd_, SIOCGIFHWADDR, &req) != 0) {
      return internal_error(fmt::format("{}: its MAC address: {}", dev, std::strerror(errno)));
    }
    std::memcpy(mac.bytes.data(), req.ifr_hwaddr.sa_data, mac.bytes.size());
    sockaddr_ll addr{};
    addr.sll_family = AF_PACKET;
    addr.sll_ifindex = static_cast<int>(index);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return internal_error(fmt::format("{}: binding a packet socket: {}", dev, std::strerror(errno)));
    }
    return {};
  }
  bool send(const uint8_t* data, size_t len) { return ::send(fd_, data, len, 0) == static_cast<ssize_t>(len); }

 private:
  int fd_ = -1;
};

}  // namespace

Status validate(const PfcStormOptions& o) {
  if (o.priorities == 0) return invalid_argument("a PFC storm needs at least one priority (0-7)");
  if (!(o.frames_per_second >= kMinFramesPerSecond && o.frames_per_second <= kMaxFramesPerSecond)) {
    return invalid_argument(fmt::format("a PFC storm's rate must be {:.4f} to {:g} frames per second (got {:g})",
                                        kMinFramesPerSecond, kMaxFramesPerSecond, o.frames_per_second));
  }
  if (o.duration.count() <= 0) return invalid_argument("a PFC storm needs a duration: it always ends");
  return {};
}

Result<std::vector<uint8_t>> pfc_storm_frame(const PfcStormOptions& o, const wire::MacAddress& source) {
  COLLIDE_RETURN_IF_ERROR(validate(o));
  wire::PauseFrame pause;
  pause.source = source;
  pause.enabled = o.priorities;
  for (size_t p = 0; p < wire::kPriorities; ++p) {
    if (pause.pauses(static_cast<uint8_t>(p))) pause.quanta[p] = o.quanta;
  }
  std::vector<uint8_t> frame(wire::kMacControlFrameSize);
  auto len = wire::encode_pfc(pause, frame);
  if (!len.ok()) return len.status();
  frame.resize(*len);
  return frame;
}

Result<PfcStormResult> run_storm_schedule(const PfcStormOptions& o, std::span<const uint8_t> frame,
                                          const StormSend& send, const std::atomic<bool>* stop) {
  COLLIDE_RETURN_IF_ERROR(validate(o));
  PfcStormResult result;
  const auto period = static_cast<uint64_t>(std::llround(1e9 / o.frames_per_second));
  const uint64_t start = now_ns();
  const uint64_t end = start + static_cast<uint64_t>(o.duration.count());
  for (uint64_t next = start; next < end;) {
    if (stop != nullptr && stop->load()) break;
    if (send(frame)) {
      ++result.frames_sent;
    } else {
      ++result.frames_failed;
    }
    next += period;
    const uint64_t now = now_ns();
    // Behind by more than a period (the machine was busy): skip ahead instead of bursting.
    if (now > next + period) {
      const uint64_t behind = (now - next) / period;
      result.frames_skipped += behind;
      next += behind * period;
    }
    if (next < end) sleep_until(next);
  }
  result.seconds = static_cast<double>(now_ns() - start) / 1e9;
  return result;
}

Result<PfcStormResult> run_pfc_storm(const std::string& dev, const PfcStormOptions& o,
                                     const std::atomic<bool>* stop) {
  COLLIDE_RETURN_IF_ERROR(validate(o));
  PacketSocket socket;
  wire::MacAddress mac;
  COLLIDE_RETURN_IF_ERROR(socket.open(dev, mac));
  auto frame = pfc_storm_frame(o, mac);
  if (!frame.ok()) return frame.status();
  return run_storm_schedule(
      o, *frame, [&socket](std::span<const uint8_t> f) { return socket.send(f.data(), f.size()); }, stop);
}

}  // namespace collide::injectors
