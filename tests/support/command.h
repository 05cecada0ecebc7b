#pragma once

// Tests run programs through the same helpers as the product.
#include "common/process.h"

namespace collide::testing {

using process::ChildProcess;
using process::CommandResult;
using process::run_checked;
using process::run_command;

}  // namespace collide::testing
