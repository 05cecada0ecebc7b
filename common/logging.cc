#include "common/logging.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace collide::logging {
namespace {

struct Registry {
  std::mutex mutex;
  spdlog::sink_ptr sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  spdlog::level::level_enum level = spdlog::level::info;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

std::shared_ptr<spdlog::logger> get(std::string_view component) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  const std::string name(component);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = std::make_shared<spdlog::logger>(name, reg.sink);
  logger->set_level(reg.level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ [%n] %v");
  spdlog::register_logger(logger);
  return logger;
}

void set_level(spdlog::level::level_enum level) {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  reg.level = level;
  spdlog::apply_all([level](const std::shared_ptr<spdlog::logger>& l) { l->set_level(level); });
}

void set_level_from_env() {
  const char* value = std::getenv("COLLIDE_LOG");
  if (value == nullptr) return;
  const auto level = spdlog::level::from_str(value);
  // from_str answers "off" for anything it does not know; only honour a real "off".
  if (level != spdlog::level::off || std::string_view(value) == "off") set_level(level);
}

}  // namespace collide::logging
