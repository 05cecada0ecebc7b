#include "orchestrator/replay/lossless_request.h"

namespace collide::orchestrator::replay {

v1::LosslessReceive lossless_receive(const testbed::ResolvedPfc& pfc) {
  v1::LosslessReceive l;
  l.set_priority(pfc.priority);
  l.set_xoff_frames(pfc.host_xoff_frames);
  l.set_xon_frames(pfc.host_xon_frames);
  l.set_quanta(pfc.quanta);
  return l;
}

replayer::engine::LosslessConfig lossless_config(const v1::ReplayRequest& request) {
  replayer::engine::LosslessConfig c;
  if (!request.has_lossless()) return c;
  const v1::LosslessReceive& l = request.lossless();
  c.enabled = true;
  c.priority = l.priority();
  c.xoff_frames = l.xoff_frames();
  c.xon_frames = l.xon_frames();
  c.quanta = l.quanta();
  return c;
}

}  // namespace collide::orchestrator::replay
