#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

// What a test that drives `collide run` on a virtual testbed needs around it: the capabilities
// (namespaces, BPF, ethtool, setpriv for the agents' replay children), a testbed name and a
// directory of its own, and, when it ends, no process of its run and no namespace of its testbed.
namespace collide::testing {

// Empty when `collide run` can build a virtual testbed here, else what is missing.
std::string missing_for_collide_run();

class CollideRunDir {
 public:
  // `bed_prefix` (2 letters) plus this process's id names the testbed; `dir_stem` the directory.
  CollideRunDir(const std::string& bed_prefix, const std::string& dir_stem);
  // Kills what still runs from the directory (agents, replays) and removes it.
  ~CollideRunDir();
  CollideRunDir(const CollideRunDir&) = delete;
  CollideRunDir& operator=(const CollideRunDir&) = delete;

  const std::string& bed() const { return bed_; }
  const std::filesystem::path& dir() const { return dir_; }
  // Whether a namespace of the testbed is still there.
  bool namespaces_left() const;
  // A shipped scenario rewritten to build this directory's testbed in place of the one it names
  // (`    name: <shipped_bed>`), written into the directory: its path, or empty when the scenario
  // could not be read or names no such testbed. Each of `edits` (text, replacement) is made too,
  // for a lighter run of the same scenario (e.g. fewer repetitions); text not found: empty.
  using Edits = std::vector<std::pair<std::string, std::string>>;
  std::filesystem::path scenario_on_own_bed(const std::filesystem::path& shipped, const std::string& shipped_bed,
                                            const Edits& edits = {}) const;

 private:
  std::string bed_;
  std::filesystem::path dir_;
};

}  // namespace collide::testing
