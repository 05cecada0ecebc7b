#pragma once

#include <filesystem>
#include <optional>
#include <string>

// Who a testbed belongs to. A run that builds a testbed records its process here; if the run dies
// without removing the fabric (SIGKILL, a crash), the next run of the same name sees the owner is
// gone and sweeps the leftovers instead of refusing to start. Testbeds kept on purpose
// (`collide testbed up`) are recorded as kept and never swept.
namespace collide::orchestrator::testbed {

// /run/collide/testbeds, or $COLLIDE_TESTBED_STATE_DIR.
std::filesystem::path owner_dir();

// Records this process as the owner of testbed `name`, or marks it kept.
void record_owner(const std::string& name);
void record_kept(const std::string& name);
void forget_owner(const std::string& name);

// True when the testbed was built by a process that no longer runs (the same pid reused by
// another process counts as gone: the record holds the owner's start time too).
bool owner_is_gone(const std::string& name);

}  // namespace collide::orchestrator::testbed
