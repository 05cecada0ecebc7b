#include "orchestrator/testbed/ip_batch.h"

#include "common/process.h"

namespace collide::orchestrator::testbed {

Status ip_batch(const std::string& netns, const std::vector<std::string>& lines) {
  if (lines.empty()) return {};
  std::string input;
  for (const std::string& line : lines) input += line + "\n";
  return process::run_checked({"ip", "-n", netns, "-batch", "-"}, input);
}

}  // namespace collide::orchestrator::testbed
