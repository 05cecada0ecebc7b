#pragma once

namespace collide::injectors {

// Sends the messages of libbpf and libxdp (used by our loaders and by DPDK's af_xdp driver) to
// the "bpf" spdlog logger. Safe to call more than once.
void route_bpf_library_logs();

}  // namespace collide::injectors
