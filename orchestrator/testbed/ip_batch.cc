#include "orchestrator/testbed/ip_batch.h"

#include <fmt/format.h>

#include "common/process.h"

namespace collide::orchestrator::testbed {

Status ip_batch(const std::string& netns, const std::vector<std::string>& lines) {
  if (lines.empty()) return {};
  std::string input;
  for (const std::string& line : lines) input += line + "\n";
  auto done = process::run_command({"ip", "-n", netns, "-batch", "-"}, input);
  if (!done.ok()) return done.status();
  if (done->exit_code != 0) {
    std::string said = done->output;
    while (!said.empty() && said.back() == '\n') said.pop_back();
    return unavailable(fmt::format("`ip -n {} -batch -` of {} lines exited with {}: {}", netns,
                                   lines.size(), done->exit_code, said));
  }
  return {};
}

}  // namespace collide::orchestrator::testbed
