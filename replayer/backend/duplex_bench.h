#pragma once

// Two collide engines, each the other's peer, over a pair of DPDK ports joined by in-memory rings
// (no kernel), against dpdk-testpmd's io forwarding over the same kind of rings, in alternating
// rounds. Prints `figure duplex_goodput_vs_testpmd_io`. Needs the EAL, which it starts itself, and
// dpdk-testpmd. Returns the process's exit status.
namespace collide::replayer::bench {

int run_duplex_bench(double seconds_per_round, int rounds, int lcore);

}  // namespace collide::replayer::bench
