#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

// The part of a sweep that reads the state directory: performs the pending undos of owners that
// are gone, and lists the devices that live owners hold. Only state that passes the checks of
// injectors/state_file.h is acted on; anything else is reported and left in place.
namespace collide::injectors {

struct StateSweepReport {
  std::vector<std::string> removed;  // "undid ... (left by process N)", dropped records
  std::vector<std::string> kept;     // undos a live owner holds
  std::vector<std::string> errors;   // refused state, failed undo steps
  std::set<std::pair<std::string, std::string>> live_devices;  // (netns, device)
};

StateSweepReport sweep_state(const std::filesystem::path& state_dir);

}  // namespace collide::injectors
