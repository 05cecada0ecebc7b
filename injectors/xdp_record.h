#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/result.h"

// DPDK's AF_XDP driver has libxdp attach an XDP program to its interface. The kernel keeps an XDP
// program attached through netlink when its process dies, so a replay killed with SIGKILL leaves
// it there. An XdpRecord writes, for the life of the port, an undo record that names the program
// by its id; a sweep detaches it once the process is gone, and only while that same program is
// still attached.
namespace collide::injectors {

// The XDP program attached to a device, as `ip -j link show` reports it.
struct XdpAttachment {
  uint32_t prog_id = 0;  // 0: none
  int mode = 0;          // 1 driver, 2 generic, 3 offload
};

// From `ip -j link show dev D` output (pure, for tests). With several programs (libxdp's
// dispatcher in multi mode), the first one.
XdpAttachment xdp_attachment_from_json(const std::string& link_json);
Result<XdpAttachment> xdp_attachment(const std::string& netns, const std::string& dev);

// The `ip netns` name of the calling thread's namespace ("" when it has none).
std::string current_netns_name();

class XdpRecord {
 public:
  // Records the program now attached to `dev` in this thread's namespace, under the state folder;
  // nullptr when none is attached.
  static Result<std::unique_ptr<XdpRecord>> create(const std::string& dev,
                                                   const std::filesystem::path& state_dir);
  // The port closed and libxdp took its program off: the record goes.
  ~XdpRecord();
  XdpRecord(const XdpRecord&) = delete;
  XdpRecord& operator=(const XdpRecord&) = delete;

 private:
  explicit XdpRecord(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace collide::injectors
