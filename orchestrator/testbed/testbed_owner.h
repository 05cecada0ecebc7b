#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "common/result.h"

// Who a testbed belongs to. A run that builds a testbed records its process here; if the run dies
// without removing the fabric (SIGKILL, a crash), the next run of the same name sees the owner is
// gone and sweeps the leftovers instead of refusing to start. Testbeds kept on purpose
// (`collide testbed up`) are recorded as kept and never swept.
namespace collide::orchestrator::testbed {

// /run/collide/testbeds, or $COLLIDE_TESTBED_STATE_DIR.
std::filesystem::path owner_dir();

// Records process `pid` (this one unless told) as the owner of testbed `name`, or marks it kept.
void record_owner(const std::string& name, pid_t pid = getpid());
void record_kept(const std::string& name);
void forget_owner(const std::string& name);

struct TestbedOwner {
  enum class State {
    kUnknown,  // no record: built before records were kept, or the record was lost
    kKept,     // `collide testbed up`: stays until `collide testbed down`
    kRunning,  // a process that still runs, most likely a run using it right now
    kGone,     // a process that has ended without removing it
  };
  State state = State::kUnknown;
  pid_t pid = 0;
  std::string command;  // the running owner's command line, for people to recognise it
};
TestbedOwner owner_of(const std::string& name);

// True when the testbed was built by a process that no longer runs (the same pid reused by
// another process counts as gone: the record holds the owner's start time too).
bool owner_is_gone(const std::string& name);

// Whether `collide testbed down` may remove it: not while its owner runs (that run would hang
// on a fabric taken from under it).
Status may_take_down(const std::string& name);

// Why a new testbed of this name cannot be built, and what to do about it.
std::string already_exists_message(const std::string& name);

}  // namespace collide::orchestrator::testbed
