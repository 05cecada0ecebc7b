#pragma once

// Tests run programs through the same helpers as the product.
#include <string>
#include <vector>

#include "common/process.h"

namespace collide::testing {

using process::ChildProcess;
using process::CommandResult;
using process::run_checked;
using process::run_command;

// What a command printed, or "" when it could not be run (the test then fails on what it expected
// to read).
inline std::string output_of(const std::vector<std::string>& argv) {
  auto r = run_command(argv);
  return r.ok() ? r->output : "";
}

}  // namespace collide::testing
