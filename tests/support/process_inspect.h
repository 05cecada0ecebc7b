#pragma once

// What a process holds, read from /proc, for tests that check nothing was left behind.
namespace collide::testing {

// BPF links the process holds: its armed faults (TCX links live exactly as long as these).
int bpf_links_of(int pid);

}  // namespace collide::testing
