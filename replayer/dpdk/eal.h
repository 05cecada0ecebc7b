#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "replayer/dpdk/eal_args.h"

namespace collide::replayer::dpdk {

// DPDK's Environment Abstraction Layer is process-wide and can be initialised once. Its log output
// goes to the "dpdk" logger from the first line on.
//
// `args` are the EAL arguments without the program name, e.g. {"--no-pci", "--no-huge",
// "--no-shconf", "-m", "256", "-l", "0"}. Calling again with the same arguments is a no-op;
// with different ones it is an error.
Status init_eal(const std::vector<std::string>& args);

bool eal_initialized();

// EAL arguments for a host without hugepages or PCI devices (CI, veth testbeds): memory from the
// heap, no shared runtime directory so several processes can run side by side, no telemetry.
// (eal_args_for with only virtual devices and heap memory; defined in eal_args.cc.)
std::vector<std::string> virtual_device_eal_args(int main_lcore, int memory_mb = 256);

// Gives the calling thread, which the EAL did not start (an engine's own std::thread), an lcore
// id, so it gets its own mempool caches and may use per-lcore DPDK APIs. Fails when the EAL is not
// up or all RTE_MAX_LCORE ids are taken. Unregister before the thread ends to return the id.
Status register_current_thread();
void unregister_current_thread();

}  // namespace collide::replayer::dpdk
