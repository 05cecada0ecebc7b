#include "tests/support/process_inspect.h"

#include <filesystem>
#include <string>

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

}  // namespace collide::testing
