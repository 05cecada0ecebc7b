#include "replayer/dpdk/bpffs.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>

namespace collide::replayer::dpdk {
namespace {

constexpr const char* kBpffs = "/sys/fs/bpf";

}  // namespace

Result<bool> ensure_bpffs() {
  struct statfs info {};
  if (statfs(kBpffs, &info) == 0 && info.f_type == BPF_FS_MAGIC) return false;
  if (mkdir(kBpffs, 0700) != 0 && errno != EEXIST) {
    return errno_status(errno, "creating /sys/fs/bpf for libxdp");
  }
  if (mount("bpf", kBpffs, "bpf", 0, "mode=0700") != 0) {
    return errno_status(errno, "mounting a BPF filesystem at /sys/fs/bpf for libxdp");
  }
  return true;
}

}  // namespace collide::replayer::dpdk
