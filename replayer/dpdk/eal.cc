#include "replayer/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>

#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "replayer/dpdk/dpdk_log.h"

namespace collide::replayer::dpdk {
namespace {

struct EalState {
  std::mutex mutex;
  bool attempted = false;
  bool ok = false;
  std::vector<std::string> args;
  // rte_eal_init may keep pointers into argv, so the strings live as long as the process.
  std::vector<std::string> argv_storage;
  std::vector<char*> argv;
};

EalState& state() {
  static EalState instance;
  return instance;
}

}  // namespace

Status init_eal(const std::vector<std::string>& args) {
  EalState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.attempted) {
    if (!s.ok) return failed_precondition("DPDK EAL initialisation failed earlier in this process");
    if (s.args != args) {
      return failed_precondition(fmt::format("DPDK EAL already initialised with [{}]",
                                             fmt::join(s.args, " ")));
    }
    return {};
  }
  s.attempted = true;
  s.args = args;
  route_dpdk_logs();

  s.argv_storage.reserve(args.size() + 1);
  s.argv_storage.push_back("collide");
  s.argv_storage.insert(s.argv_storage.end(), args.begin(), args.end());
  for (std::string& a : s.argv_storage) s.argv.push_back(a.data());
  s.argv.push_back(nullptr);

  const int rc = rte_eal_init(static_cast<int>(s.argv_storage.size()), s.argv.data());
  if (rc < 0) {
    const int err = rte_errno;
    return errno_status(err, fmt::format("rte_eal_init [{}]", fmt::join(args, " ")));
  }
  s.ok = true;
  return {};
}

bool eal_initialized() {
  EalState& s = state();
  std::lock_guard lock(s.mutex);
  return s.ok;
}

std::vector<std::string> virtual_device_eal_args(int main_lcore, int memory_mb) {
  return {"--no-pci",     "--no-huge", "--no-shconf", "--no-telemetry", "-m",
          std::to_string(memory_mb), "-l",        std::to_string(main_lcore)};
}

}  // namespace collide::replayer::dpdk
