#pragma once

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/parse_number.h"

namespace collide::testing {

// A count from report.json: proto JSON writes 64-bit counts as strings, 32-bit ones as numbers.
// A count that does not read fails the test and counts zero.
inline uint64_t count_of(const nlohmann::json& v) {
  if (v.is_string()) {
    auto n = parse_number<uint64_t>(v.get<std::string>(), "report count");
    EXPECT_TRUE(n.ok()) << n.status().to_string();
    return n.ok() ? *n : 0;
  }
  return v.is_number_unsigned() ? v.get<uint64_t>() : 0;
}

// A count of nanoseconds from report.json (paused_ns, detected_ns...), in milliseconds.
inline double ms_of(const nlohmann::json& ns) { return static_cast<double>(count_of(ns)) / 1e6; }

}  // namespace collide::testing
