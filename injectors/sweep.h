#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

// The start-up sweep: removes whatever an earlier collide left behind on this host and in its
// named network namespaces when both the run and its guardian died. It
//  - performs the pending undos that dead owners left in the state directory (this brings links
//    collide took down back up, with their addresses and routes, and detaches the XDP programs
//    of killed AF_XDP replays);
//  - deletes qdiscs with collide's handle (c011:), ingress u32 filters with collide's priority,
//    clsact BPF filters with collide's handle (0xc011de), ifb devices named collide-ifb<N>, and a
//    clsact that is left empty by those deletions;
//  - counts TCX links (the kernel removes them with their owner, so any seen belong to a live
//    process).
// Objects on devices that a live collide process has registered are left alone.
namespace collide::injectors {

struct SweepOptions {
  std::filesystem::path state_dir;  // empty: default_state_dir()
  // Namespaces to sweep ("" = the host's own). Unset: the host's and every `ip netns` namespace.
  std::optional<std::vector<std::string>> namespaces;
};

struct SweepReport {
  std::vector<std::string> removed;  // one line per thing removed or undone
  std::vector<std::string> kept;     // collide objects of a live process, left alone
  std::vector<std::string> errors;   // what could not be removed, and why
  int tcx_links = -1;                // TCX links on the host (-1: bpftool could not tell)
};

// One thing a sweep would delete, and the command that deletes it.
struct Leftover {
  std::string netns;
  std::string device;
  std::string what;  // "qdisc c011: (tbf)", "ingress filter pref 49169 (u32)", "ifb device"
  std::vector<std::string> command;
};

// Pure helpers over iproute2 JSON, for tests.
std::vector<Leftover> collide_qdiscs(const std::string& netns, const std::string& device,
                                     const std::string& qdisc_json);
std::vector<Leftover> collide_filters(const std::string& netns, const std::string& device,
                                      const std::string& direction,  // "ingress" | "egress"
                                      const std::string& filter_json);
std::vector<Leftover> collide_ifbs(const std::string& netns, const std::string& link_json);

Result<SweepReport> sweep(const SweepOptions& options);

// The report as lines for people ("removed ...", "kept ...", "error ...", a summary).
std::vector<std::string> describe(const SweepReport& report);

}  // namespace collide::injectors
