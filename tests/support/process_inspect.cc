#include "tests/support/process_inspect.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/parse_number.h"

namespace collide::testing {

int bpf_links_of(int pid) {
  int n = 0;
  std::error_code ec;
  const std::filesystem::path fds = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& fd : std::filesystem::directory_iterator(fds, ec)) {
    std::error_code rec;
    if (std::filesystem::read_symlink(fd.path(), rec).string() == "anon_inode:bpf_link") ++n;
  }
  return n;
}

std::string cmdline_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

std::vector<int> processes_with(const std::vector<std::string>& parts) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    auto read = parse_number<int>(e.path().filename().string(), "/proc entry");
    if (!read.ok()) continue;  // not a process: /proc/self, /proc/net, ...
    const int pid = *read;
    if (pid <= 0 || pid == getpid()) continue;
    const std::string cmd = cmdline_of(pid);
    bool all = !cmd.empty();
    for (const auto& p : parts) all = all && cmd.find(p) != std::string::npos;
    if (all) out.push_back(pid);
  }
  return out;
}

}  // namespace collide::testing
