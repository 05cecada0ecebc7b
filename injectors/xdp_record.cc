#include "injectors/xdp_record.h"

#include <net/if.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/logging.h"
#include "common/process.h"
#include "injectors/guardian.h"
#include "injectors/state_file.h"

namespace collide::injectors {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Record ids above the guardian's (which count from 1 in the same owner folder), one per device.
constexpr uint64_t kXdpRecordIdBase = uint64_t{1} << 32;

}  // namespace

XdpAttachment xdp_attachment_from_json(const std::string& link_json) {
  XdpAttachment found;
  const json links = json::parse(link_json, nullptr, false);
  if (!links.is_array() || links.empty() || !links[0].is_object()) return found;
  const json xdp = links[0].value("xdp", json::object());
  if (!xdp.is_object()) return found;
  json prog = xdp.value("prog", json::object());
  int mode = xdp.value("mode", 0);
  if (auto attached = xdp.find("attached");
      attached != xdp.end() && attached->is_array() && !attached->empty()) {
    prog = (*attached)[0].value("prog", json::object());
    mode = (*attached)[0].value("mode", 0);
  }
  if (!prog.is_object()) return found;
  found.prog_id = prog.value("id", 0u);
  found.mode = mode;
  return found;
}

Result<XdpAttachment> xdp_attachment(const std::string& netns, const std::string& dev) {
  auto result = process::run_command(netns_command("ip", netns, {"-j", "link", "show", "dev", dev}));
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return not_found(fmt::format("no interface {}{}", dev, netns.empty() ? "" : " in " + netns));
  }
  return xdp_attachment_from_json(result->output);
}

std::string current_netns_name() {
  auto result = process::run_command({"ip", "netns", "identify"});
  if (!result.ok() || result->exit_code != 0) return "";
  std::string name = result->output;
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return is_netns_name(name) ? name : "";
}

Result<std::unique_ptr<XdpRecord>> XdpRecord::create(const std::string& dev,
                                                     const fs::path& state_dir) {
  // Asked from this thread's namespace (the `ip` it starts inherits it), recorded by name.
  auto attached = xdp_attachment("", dev);
  if (!attached.ok()) return attached.status();
  if (attached->prog_id == 0) return std::unique_ptr<XdpRecord>();
  const std::string netns = current_netns_name();
  const unsigned ifindex = if_nametoindex(dev.c_str());
  const auto start = process_start_time(getpid());
  if (ifindex == 0 || !start) return internal_error(fmt::format("cannot name {} or this process", dev));
  const fs::path owner = owner_state_dir(state_dir, getpid(), *start);
  COLLIDE_RETURN_IF_ERROR(make_state_folder(state_dir, fs::perms(0755)));
  COLLIDE_RETURN_IF_ERROR(make_state_folder(owner, fs::perms(0700)));
  UndoAction undo;
  undo.description = fmt::format("XDP program {} on {}{}", attached->prog_id, dev,
                                 netns.empty() ? "" : " in " + netns);
  undo.netns = netns;
  undo.devices = {dev};
  undo.steps = {UndoStep::detach_xdp(dev, attached->prog_id)};
  const fs::path path = owner / fmt::format("{}.json", kXdpRecordIdBase + ifindex);
  COLLIDE_RETURN_IF_ERROR(write_state_file(path, encode_undo(undo)));
  logging::get("faults")->debug("recorded {} in {}", undo.description, path.string());
  return std::unique_ptr<XdpRecord>(new XdpRecord(path));
}

XdpRecord::~XdpRecord() {
  std::error_code ec;
  fs::remove(path_, ec);
  fs::remove(path_.parent_path(), ec);  // only once empty
}

}  // namespace collide::injectors
