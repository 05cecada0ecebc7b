#include "injectors/bpf_log.h"

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string_view>

#include "common/logging.h"

namespace collide::injectors {
namespace {

// Formats one libbpf/libxdp message (they end lines themselves) into one log record.
int print_to_logger(spdlog::level::level_enum level, const char* format, va_list args) {
  std::array<char, 1024> buffer{};
  const int n = std::vsnprintf(buffer.data(), buffer.size(), format, args);
  if (n <= 0) return n;
  std::string_view text(buffer.data(), std::min<size_t>(static_cast<size_t>(n), buffer.size() - 1));
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  logging::get("bpf")->log(level, "{}", text);
  return n;
}

spdlog::level::level_enum level_of(bool warn, bool info) {
  return warn ? spdlog::level::warn : info ? spdlog::level::info : spdlog::level::debug;
}

int libbpf_print(enum libbpf_print_level level, const char* format, va_list args) {
  return print_to_logger(level_of(level == LIBBPF_WARN, level == LIBBPF_INFO), format, args);
}

int libxdp_print(enum libxdp_print_level level, const char* format, va_list args) {
  return print_to_logger(level_of(level == LIBXDP_WARN, level == LIBXDP_INFO), format, args);
}

}  // namespace

void route_bpf_library_logs() {
  static std::once_flag once;
  std::call_once(once, [] {
    libbpf_set_print(libbpf_print);
    libxdp_set_print(libxdp_print);
  });
}

}  // namespace collide::injectors
