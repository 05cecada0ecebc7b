#include "traces/import/importer.h"

namespace collide::traces {

void ImportReport::add_problem(const ImportOptions& options, std::string where, std::string what) {
  ++problems_total;
  if (problems.size() < options.max_reported_problems) {
    problems.push_back({std::move(where), std::move(what)});
  }
}

}  // namespace collide::traces
