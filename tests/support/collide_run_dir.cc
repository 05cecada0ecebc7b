#include "tests/support/collide_run_dir.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/process.h"
#include "tests/support/privileged.h"
#include "tests/support/process_inspect.h"

namespace collide::testing {

std::string missing_for_collide_run() {
  for (const std::string& missing : {missing_netns(), missing_bpf(), missing_tool("ethtool"), missing_tool("setpriv")}) {
    if (!missing.empty()) return missing;
  }
  return "";
}

CollideRunDir::CollideRunDir(const std::string& bed_prefix, const std::string& dir_stem)
    : bed_(fmt::format("{}{}", bed_prefix, getpid() % 10000)),  // testbed names: at most 6 characters
      dir_(std::filesystem::temp_directory_path() / fmt::format("{}-{}", dir_stem, getpid())) {
  std::filesystem::remove_all(dir_);
  std::filesystem::create_directories(dir_);
}

CollideRunDir::~CollideRunDir() {
  for (int pid : processes_with({dir_.string()})) kill(pid, SIGKILL);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::filesystem::path CollideRunDir::scenario_on_own_bed(const std::filesystem::path& shipped,
                                                        const std::string& shipped_bed, const Edits& edits) const {
  std::ifstream in(shipped);
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string name = "    name: " + shipped_bed + "\n";
  const auto at = yaml.find(name);
  if (!in || at == std::string::npos) return {};
  yaml.replace(at, name.size(), "    name: " + bed_ + "\n");
  for (const auto& [from, to] : edits) {
    const auto edit_at = yaml.find(from);
    if (edit_at == std::string::npos) return {};
    yaml.replace(edit_at, from.size(), to);
  }
  const auto path = dir_ / "scenario.yaml";
  std::ofstream(path) << yaml;
  return path;
}

bool CollideRunDir::namespaces_left() const {
  auto list = process::run_command({"ip", "netns", "list"});
  return list.ok() && list->output.find(bed_ + "-") != std::string::npos;
}

}  // namespace collide::testing
