#include "traces/import/input_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace collide::traces {

Result<std::vector<std::string>> expand_input_files(const std::vector<std::string>& inputs,
                                                    const std::string& what,
                                                    const std::string& suffix) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!fs::is_directory(input, ec)) {
      files.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(input, ec)) {
      if (!entry.is_regular_file()) continue;
      const std::string name = entry.path().filename().string();
      if (name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        found.push_back(entry.path().string());
      }
    }
    if (ec) return not_found(fmt::format("{}: cannot list: {}", input, ec.message()));
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  if (files.empty()) return invalid_argument(fmt::format("no {} given", what));
  return files;
}

}  // namespace collide::traces
