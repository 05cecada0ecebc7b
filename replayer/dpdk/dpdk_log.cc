#include "replayer/dpdk/dpdk_log.h"

#include <rte_log.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "common/logging.h"
#ifdef COLLIDE_HAVE_BPF_LOG
#include "injectors/bpf_log.h"
#endif

namespace collide::replayer::dpdk {
namespace {

spdlog::level::level_enum to_spdlog_level(int rte_level) {
  switch (rte_level) {
    case RTE_LOG_EMERG:
    case RTE_LOG_ALERT:
    case RTE_LOG_CRIT: return spdlog::level::critical;
    case RTE_LOG_ERR: return spdlog::level::err;
    case RTE_LOG_WARNING: return spdlog::level::warn;
    case RTE_LOG_NOTICE:
    case RTE_LOG_INFO: return spdlog::level::info;
    default: return spdlog::level::debug;
  }
}

// DPDK writes a message in pieces through vfprintf; lines are assembled per thread.
ssize_t write_to_logger(void* /*cookie*/, const char* data, size_t size) {
  thread_local std::string pending;
  pending.append(data, size);
  size_t newline;
  while ((newline = pending.find('\n')) != std::string::npos) {
    std::string_view line(pending.data(), newline);
    if (!line.empty()) {
      logging::get("dpdk")->log(to_spdlog_level(rte_log_cur_msg_loglevel()), "{}", line);
    }
    pending.erase(0, newline + 1);
  }
  return static_cast<ssize_t>(size);
}

}  // namespace

void route_dpdk_logs() {
  static std::once_flag once;
  std::call_once(once, [] {
#ifdef COLLIDE_HAVE_BPF_LOG
    injectors::route_bpf_library_logs();
#endif
    cookie_io_functions_t io{};
    io.write = write_to_logger;
    FILE* stream = fopencookie(nullptr, "w", io);
    if (stream == nullptr) return;
    setvbuf(stream, nullptr, _IONBF, 0);
    rte_openlog_stream(stream);
  });
}

}  // namespace collide::replayer::dpdk
