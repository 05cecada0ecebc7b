#pragma once

#include <filesystem>
#include <string>

// A guardian cannot outlive a kill of its whole process tree (a cgroup killed by systemd,
// Kubernetes or Slurm takes it with collide). The undos it held are still on disk, so every
// `collide agent`, `run` and `inject` performs those of owners that are gone before it starts,
// and says so on stderr. State that a running collide (or its guardian) holds is left alone.
namespace collide::cli {

void sweep_at_start(const std::string& command, const std::filesystem::path& state_dir);

}  // namespace collide::cli
