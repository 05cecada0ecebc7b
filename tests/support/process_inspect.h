#pragma once

#include <string>
#include <vector>

// What a process holds, read from /proc, for tests that check nothing was left behind.
namespace collide::testing {

// BPF links the process holds: its armed faults (TCX links live exactly as long as these).
int bpf_links_of(int pid);

// The command line of a process, arguments joined by spaces ("" if it is gone).
std::string cmdline_of(int pid);

// Live processes other than this one whose command line contains every one of `parts`.
std::vector<int> processes_with(const std::vector<std::string>& parts);

}  // namespace collide::testing
