#include "traces/synth/rank_layout.h"

#include <fmt/format.h>

namespace collide::traces::synth {

RankLayout::RankLayout(const v1::ParallelismSpec& p)
    : tp_(p.tp()), dp_(p.dp()), pp_(p.pp()), ep_(p.ep()) {}

Coords RankLayout::coords(uint32_t rank) const {
  Coords c;
  c.tp = rank % tp_;
  c.dp = (rank / tp_) % dp_;
  c.pp = rank / (tp_ * dp_);
  return c;
}

// Group numbers: the coordinates the group does not vary, flattened in layout order.
RankComms RankLayout::comms_of(uint32_t rank) const {
  const Coords c = coords(rank);
  RankComms out;
  if (tp_ > 1) out.tp = fmt::format("tp{}", c.dp + dp_ * c.pp);
  if (dp_ > 1) out.dp = fmt::format("dp{}", c.tp + tp_ * c.pp);
  if (pp_ > 1) out.pp = fmt::format("pp{}", c.tp + tp_ * c.dp);
  const uint32_t edp = dp_ / ep_;
  const uint32_t e = c.dp % ep_;
  const uint32_t k = c.dp / ep_;
  if (ep_ > 1) out.ep = fmt::format("ep{}", c.tp + tp_ * (k + edp * c.pp));
  if (ep_ > 1 && edp > 1) out.edp = fmt::format("edp{}", c.tp + tp_ * (e + ep_ * c.pp));
  return out;
}

void RankLayout::add_communicators(v1::TraceHeader& header) const {
  v1::Communicator* world_comm = header.add_communicators();
  world_comm->set_id("world");
  world_comm->set_name("world");
  for (uint32_t r = 0; r < world(); ++r) world_comm->add_ranks(r);

  if (tp_ > 1) {
    for (uint32_t pp = 0; pp < pp_; ++pp) {
      for (uint32_t dp = 0; dp < dp_; ++dp) {
        v1::Communicator* comm = header.add_communicators();
        comm->set_id(fmt::format("tp{}", dp + dp_ * pp));
        comm->set_name("tp");
        for (uint32_t tp = 0; tp < tp_; ++tp) comm->add_ranks(rank_of({tp, dp, pp}));
      }
    }
  }
  if (dp_ > 1) {
    for (uint32_t pp = 0; pp < pp_; ++pp) {
      for (uint32_t tp = 0; tp < tp_; ++tp) {
        v1::Communicator* comm = header.add_communicators();
        comm->set_id(fmt::format("dp{}", tp + tp_ * pp));
        comm->set_name("dp");
        for (uint32_t dp = 0; dp < dp_; ++dp) comm->add_ranks(rank_of({tp, dp, pp}));
      }
    }
  }
  if (pp_ > 1) {
    for (uint32_t dp = 0; dp < dp_; ++dp) {
      for (uint32_t tp = 0; tp < tp_; ++tp) {
        v1::Communicator* comm = header.add_communicators();
        comm->set_id(fmt::format("pp{}", tp + tp_ * dp));
        comm->set_name("pp");
        for (uint32_t pp = 0; pp < pp_; ++pp) comm->add_ranks(rank_of({tp, dp, pp}));
      }
    }
  }
  if (ep_ > 1) {
    const uint32_t edp = dp_ / ep_;
    for (uint32_t pp = 0; pp < pp_; ++pp) {
      for (uint32_t k = 0; k < edp; ++k) {
        for (uint32_t tp = 0; tp < tp_; ++tp) {
          v1::Communicator* comm = header.add_communicators();
          comm->set_id(fmt::format("ep{}", tp + tp_ * (k + edp * pp)));
          comm->set_name("ep");
          for (uint32_t e = 0; e < ep_; ++e) comm->add_ranks(rank_of({tp, e + ep_ * k, pp}));
        }
      }
    }
    if (edp > 1) {
      for (uint32_t pp = 0; pp < pp_; ++pp) {
        for (uint32_t e = 0; e < ep_; ++e) {
          for (uint32_t tp = 0; tp < tp_; ++tp) {
            v1::Communicator* comm = header.add_communicators();
            comm->set_id(fmt::format("edp{}", tp + tp_ * (e + ep_ * pp)));
            comm->set_name("edp");
            for (uint32_t k = 0; k < edp; ++k) comm->add_ranks(rank_of({tp, e + ep_ * k, pp}));
          }
        }
      }
    }
  }
}

}  // namespace collide::traces::synth
