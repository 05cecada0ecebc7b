#pragma once

#include <memory>
#include <string_view>

#include <spdlog/spdlog.h>

namespace collide::logging {

// The named logger of one component ("replayer", "dpdk", "bpf", ...), created on first use. All
// loggers share one stderr sink and the level set below.
std::shared_ptr<spdlog::logger> get(std::string_view component);

// Sets the level of every logger, present and future.
void set_level(spdlog::level::level_enum level);

// Reads COLLIDE_LOG (trace, debug, info, warn, error, off); an unknown value keeps the default.
void set_level_from_env();

}  // namespace collide::logging
