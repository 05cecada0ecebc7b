#include "tests/support/privileged.h"

#ifdef COLLIDE_HAVE_LIBBPF
#include <bpf/libbpf.h>
#endif
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "tests/support/command.h"

namespace collide::testing {

bool privileged_required() {
  const char* value = std::getenv("COLLIDE_REQUIRE_PRIVILEGED");
  return value != nullptr && std::string_view(value) == "1";
}

std::string missing_root() { return geteuid() == 0 ? "" : "needs root"; }

std::string missing_tool(const std::string& program) {
  auto result = run_command({"sh", "-c", "command -v " + program});
  if (!result.ok() || result->exit_code != 0) return "needs the program '" + program + "'";
  return "";
}

std::string missing_netns() {
  if (auto why = missing_root(); !why.empty()) return why;
  if (auto why = missing_tool("ip"); !why.empty()) return why;
  auto result = run_command({"ip", "netns", "list"});
  if (!result.ok() || result->exit_code != 0) return "`ip netns` does not work here";
  return "";
}

std::string missing_bpf() {
  if (auto why = missing_root(); !why.empty()) return why;
#ifdef COLLIDE_HAVE_LIBBPF
  if (libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SCHED_CLS, nullptr) != 1) {
    return "the kernel refuses tc BPF programs";
  }
  return "";
#else
  return "collide was built without eBPF support";
#endif
}

}  // namespace collide::testing
