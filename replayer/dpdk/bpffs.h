#pragma once

#include "common/result.h"

// libxdp, which DPDK's AF_XDP driver loads its XDP program through, pins its multi-program
// dispatcher in a BPF filesystem at /sys/fs/bpf. Without one it warns ("No bpffs found") and
// falls back to a single program. Hosts that do not mount it get it mounted here, as systemd
// does at boot.
namespace collide::replayer::dpdk {

// Mounts a BPF filesystem at /sys/fs/bpf unless one is there. Returns whether it mounted one.
Result<bool> ensure_bpffs();

}  // namespace collide::replayer::dpdk
