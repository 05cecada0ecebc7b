#include "orchestrator/testbed/pause_cycle.h"

#include <algorithm>

namespace collide::orchestrator::testbed {

std::vector<size_t> find_pause_cycle(const std::vector<PausedQueue>& queues) {
  // Depth-first over held queues only: a queue that is not held is draining, and no cycle
  // through it can be stuck. A back edge to a queue on the current path closes a cycle.
  enum class Mark { kUnseen, kOnPath, kDone };
  std::vector<Mark> mark(queues.size(), Mark::kUnseen);
  std::vector<size_t> path;
  std::vector<size_t> next_edge(queues.size(), 0);
  for (size_t root = 0; root < queues.size(); ++root) {
    if (!queues[root].held || mark[root] != Mark::kUnseen) continue;
    path.push_back(root);
    mark[root] = Mark::kOnPath;
    while (!path.empty()) {
      const size_t at = path.back();
      const std::vector<size_t>& edges = queues[at].waits_on;
      if (next_edge[at] == edges.size()) {
        mark[at] = Mark::kDone;
        path.pop_back();
        continue;
      }
      const size_t to = edges[next_edge[at]++];
      if (to >= queues.size() || !queues[to].held || mark[to] == Mark::kDone) continue;
      if (mark[to] == Mark::kOnPath) {
        std::vector<size_t> cycle(std::find(path.begin(), path.end(), to), path.end());
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        return cycle;
      }
      mark[to] = Mark::kOnPath;
      path.push_back(to);
    }
  }
  return {};
}

}  // namespace collide::orchestrator::testbed
