#include "orchestrator/cli/start_sweep.h"

#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "injectors/state_sweep.h"

namespace collide::cli {

void sweep_at_start(const std::string& command, const std::filesystem::path& state_dir) {
  // Another user's state folder is not this process's to finish (and `collide inject --sweep`
  // reports it); a folder that is not there holds nothing.
  struct stat st {};
  if (lstat(state_dir.c_str(), &st) != 0 || st.st_uid != geteuid()) return;
  const injectors::StateSweepReport report = injectors::sweep_state(state_dir);
  for (const std::string& line : report.removed) {
    std::cerr << fmt::format("collide {}: swept what a dead collide left: {}\n", command, line);
  }
  for (const std::string& line : report.errors) {
    std::cerr << fmt::format("collide {}: sweep: {}\n", command, line);
  }
}

}  // namespace collide::cli
