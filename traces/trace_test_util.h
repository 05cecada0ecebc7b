#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "traces/trace_io.h"

// Reading a whole collide trace into memory, for importers' tests.
namespace collide::traces {

struct LoadedTrace {
  v1::TraceHeader header;
  std::vector<v1::Op> ops;
};

inline LoadedTrace load_trace(const std::string& path) {
  LoadedTrace loaded;
  auto reader = TraceReader::open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return loaded;
  loaded.header = (*reader)->header();
  v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    loaded.ops.push_back(op);
  }
  return loaded;
}

}  // namespace collide::traces
