#include "replayer/dpdk/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

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

Status register_current_thread() {
  if (!eal_initialized()) return failed_precondition("DPDK EAL is not initialised");
  if (rte_lcore_id() != LCORE_ID_ANY) return {};  // an EAL thread, or registered already
  if (rte_thread_register() != 0) {
    return errno_status(rte_errno, "registering a thread with the DPDK EAL (rte_thread_register)");
  }
  return {};
}

void unregister_current_thread() {
  if (rte_lcore_id() != LCORE_ID_ANY && rte_lcore_has_role(rte_lcore_id(), ROLE_NON_EAL) > 0) {
    rte_thread_unregister();
  }
}

}  // namespace collide::replayer::dpdk
