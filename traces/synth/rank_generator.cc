#include "traces/synth/rank_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "traces/op_types.h"
#include "traces/synth/model_spec.h"
#include "traces/synth/pipeline_schedule.h"

namespace collide::traces::synth {
namespace {

uint64_t at_least_one(double elements) {
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(elements)));
}

uint64_t ceil_div(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

// Writes one rank's ops: numbers them, carries the compute time accumulated since the previous
// op, and builds labels from a per-phase prefix ("it0.mb3.layer12.fwd.") and a suffix.
class Emitter {
 public:
  Emitter(uint32_t rank, v1::DataType datatype, uint32_t element_bytes, bool timed,
          const RankGenerator::Sink& sink)
      : element_bytes_(element_bytes), timed_(timed), sink_(sink) {
    op_.set_rank(rank);
    op_.set_datatype(datatype);
  }

  void compute(double ns) { pending_ns_ += ns; }
  void set_iteration(uint32_t it) { op_.set_iteration(it); }
  std::string& prefix() { return prefix_; }

  Status emit(v1::OpKind kind, const std::string& comm, uint64_t count, const char* suffix,
              int32_t root = -1, uint32_t group = 0) {
    op_.set_index(index_++);
    op_.set_kind(kind);
    op_.set_comm(comm);
    op_.set_count(count);
    op_.set_bytes(count * element_bytes_);
    op_.set_root(root);
    op_.set_reduce_op(kind == v1::OP_KIND_ALL_REDUCE || kind == v1::OP_KIND_REDUCE_SCATTER
                          ? v1::REDUCE_OP_SUM
                          : v1::REDUCE_OP_UNSPECIFIED);
    op_.set_group(group);
    if (timed_) {
      const double whole = std::floor(pending_ns_);
      op_.set_compute_before_ns(static_cast<uint64_t>(whole));
      pending_ns_ -= whole;  // the fraction carries on, so long runs do not drift
    }
    std::string& label = *op_.mutable_label();
    label.assign(prefix_);
    label.append(suffix);
    return sink_(op_);
  }

 private:
  v1::Op op_;
  uint64_t index_ = 0;
  uint32_t element_bytes_;
  bool timed_;
  double pending_ns_ = 0;
  std::string prefix_;
  const RankGenerator::Sink& sink_;
};

class RankRun {
 public:
  RankRun(const v1::ModelSpec& spec, const JobShape& shape, const RankLayout& layout, uint32_t rank,
          const RankGenerator::Sink& sink)
      : spec_(spec),
        shape_(shape),
        coords_(layout.coords(rank)),
        comms_(layout.comms_of(rank)),
        sequence_parallel_(spec.parallelism().sequence_parallel() && !comms_.tp.empty()),
        zero3_(spec.parallelism().zero_stage() == 3),
        out_(rank, spec.training().datatype(), shape.element_bytes, shape.forward_ns_per_layer > 0,
             sink) {}

  Status run() {
    const uint32_t stages = spec_.parallelism().pp();
    const std::vector<PipeStep> schedule = one_f_one_b(coords_.pp, stages, shape_.micro_batches);
    for (uint32_t it = 0; it < spec_.training().iterations(); ++it) {
      out_.set_iteration(it);
      it_ = it;
      uint32_t schedule_group = 0;
      uint32_t group = 0;
      for (const PipeStep& step : schedule) {
        if (step.group != 0 && step.group != schedule_group) {
          schedule_group = step.group;
          group = ++next_group_;
        }
        COLLIDE_RETURN_IF_ERROR(run_step(step, step.group != 0 ? group : 0));
      }
      if (!zero3_) COLLIDE_RETURN_IF_ERROR(gradient_sync());
    }
    return {};
  }

 private:
  Status run_step(const PipeStep& step, uint32_t group) {
    const auto [first, last] = shape_.stage_layers[coords_.pp];
    const int32_t next = static_cast<int32_t>(coords_.pp) + 1;
    const int32_t prev = static_cast<int32_t>(coords_.pp) - 1;
    const uint64_t act = shape_.activation_elements;
    switch (step.action) {
      case PipeAction::kForward:
        for (uint32_t layer = first; layer < last; ++layer) {
          COLLIDE_RETURN_IF_ERROR(layer_forward(step.micro_batch, layer));
        }
        return {};
      case PipeAction::kBackward:
        for (uint32_t layer = last; layer-- > first;) {
          COLLIDE_RETURN_IF_ERROR(layer_backward(step.micro_batch, layer));
        }
        return {};
      case PipeAction::kSendForward:
        set_prefix(step.micro_batch, "fwd.");
        return out_.emit(v1::OP_KIND_SEND, comms_.pp, act, "pp.send", next, group);
      case PipeAction::kRecvForward:
        set_prefix(step.micro_batch, "fwd.");
        return out_.emit(v1::OP_KIND_RECV, comms_.pp, act, "pp.recv", prev, group);
      case PipeAction::kSendBackward:
        set_prefix(step.micro_batch, "bwd.");
        return out_.emit(v1::OP_KIND_SEND, comms_.pp, act, "pp.send", prev, group);
      case PipeAction::kRecvBackward:
        set_prefix(step.micro_batch, "bwd.");
        return out_.emit(v1::OP_KIND_RECV, comms_.pp, act, "pp.recv", next, group);
    }
    return internal_error("unknown pipeline step");
  }

  void set_prefix(uint32_t mb, const char* phase) {
    std::string& p = out_.prefix();
    p.clear();
    fmt::format_to(std::back_inserter(p), "it{}.mb{}.{}", it_, mb, phase);
  }
  void set_layer_prefix(uint32_t mb, uint32_t layer, const char* phase) {
    std::string& p = out_.prefix();
    p.clear();
    fmt::format_to(std::back_inserter(p), "it{}.mb{}.layer{}.{}", it_, mb, layer, phase);
  }

  uint64_t tp_shard_elements() const { return shape_.sequence_shard_elements; }

  // ZeRO-3: the layer's parameters are sharded over DP (and the experts' over EDP); parameters are
  // all-gathered before use (labels "dp.ag", "edp.ag") and gradients reduce-scattered after the
  // backward pass ("dp.rs", "edp.rs"), each over this rank's shard.
  Status zero3_layer_collective(v1::OpKind kind, const char* dp_label, const char* edp_label) {
    const double tp = spec_.parallelism().tp();
    if (!comms_.dp.empty() && shape_.dp_layer_parameters > 0) {
      const double dp = spec_.parallelism().dp();
      COLLIDE_RETURN_IF_ERROR(out_.emit(kind, comms_.dp,
                                        at_least_one(shape_.dp_layer_parameters / tp / dp),
                                        dp_label));
    }
    if (!comms_.edp.empty() && shape_.edp_layer_parameters > 0) {
      const double edp = spec_.parallelism().dp() / spec_.parallelism().ep();
      COLLIDE_RETURN_IF_ERROR(out_.emit(kind, comms_.edp,
                                        at_least_one(shape_.edp_layer_parameters / tp / edp),
                                        edp_label));
    }
    return {};
  }
  Status gather_parameters() {
    return zero3_layer_collective(v1::OP_KIND_ALL_GATHER, "dp.ag", "edp.ag");
  }
  Status scatter_gradients() {
    return zero3_layer_collective(v1::OP_KIND_REDUCE_SCATTER, "dp.rs", "edp.rs");
  }

  Status layer_forward(uint32_t mb, uint32_t layer) {
    set_layer_prefix(mb, layer, "fwd.");
    const double half = shape_.forward_ns_per_layer / 2;
    const bool tp = !comms_.tp.empty();
    const bool ep = !comms_.ep.empty();
    if (zero3_) COLLIDE_RETURN_IF_ERROR(gather_parameters());
    // Attention.
    if (sequence_parallel_) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_ALL_GATHER, comms_.tp, tp_shard_elements(), "attn.tp.ag"));
    }
    out_.compute(half);
    if (sequence_parallel_) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_REDUCE_SCATTER, comms_.tp, tp_shard_elements(), "attn.tp.rs"));
    } else if (tp) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_ALL_REDUCE, comms_.tp, shape_.activation_elements, "attn.tp.ar"));
    }
    // MLP (experts).
    if (sequence_parallel_) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_ALL_GATHER, comms_.tp, tp_shard_elements(), "mlp.tp.ag"));
    }
    if (ep) {
      COLLIDE_RETURN_IF_ERROR(out_.emit(v1::OP_KIND_ALL_TO_ALL, comms_.ep,
                                        shape_.all_to_all_elements, "mlp.ep.dispatch"));
    }
    out_.compute(half);
    if (ep) {
      COLLIDE_RETURN_IF_ERROR(out_.emit(v1::OP_KIND_ALL_TO_ALL, comms_.ep,
                                        shape_.all_to_all_elements, "mlp.ep.combine"));
    }
    if (sequence_parallel_) {
      return out_.emit(v1::OP_KIND_REDUCE_SCATTER, comms_.tp, tp_shard_elements(), "mlp.tp.rs");
    }
    if (tp) {
      return out_.emit(v1::OP_KIND_ALL_REDUCE, comms_.tp, shape_.activation_elements, "mlp.tp.ar");
    }
    return {};
  }

  Status layer_backward(uint32_t mb, uint32_t layer) {
    set_layer_prefix(mb, layer, "bwd.");
    const double half = shape_.backward_ns_per_layer / 2;
    const bool tp = !comms_.tp.empty();
    const bool ep = !comms_.ep.empty();
    if (zero3_) COLLIDE_RETURN_IF_ERROR(gather_parameters());
    // MLP first: gradients flow from the layer's output back to its input.
    if (sequence_parallel_) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_ALL_GATHER, comms_.tp, tp_shard_elements(), "mlp.tp.ag"));
    }
    if (ep) {
      COLLIDE_RETURN_IF_ERROR(out_.emit(v1::OP_KIND_ALL_TO_ALL, comms_.ep,
                                        shape_.all_to_all_elements, "mlp.ep.combine"));
    }
    out_.compute(half);
    if (ep) {
      COLLIDE_RETURN_IF_ERROR(out_.emit(v1::OP_KIND_ALL_TO_ALL, comms_.ep,
                                        shape_.all_to_all_elements, "mlp.ep.dispatch"));
    }
    if (sequence_parallel_) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_REDUCE_SCATTER, comms_.tp, tp_shard_elements(), "mlp.tp.rs"));
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_ALL_GATHER, comms_.tp, tp_shard_elements(), "attn.tp.ag"));
    } else if (tp) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_ALL_REDUCE, comms_.tp, shape_.activation_elements, "mlp.tp.ar"));
    }
    out_.compute(half);
    if (sequence_parallel_) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_REDUCE_SCATTER, comms_.tp, tp_shard_elements(), "attn.tp.rs"));
    } else if (tp) {
      COLLIDE_RETURN_IF_ERROR(
          out_.emit(v1::OP_KIND_ALL_REDUCE, comms_.tp, shape_.activation_elements, "attn.tp.ar"));
    }
    if (zero3_) return scatter_gradients();
    return {};
  }

  // Buckets of one group's gradients: all-reduce (ZeRO-0) or reduce-scatter (ZeRO-1/2, the
  // all-gather of updated parameters follows in gather_buckets).
  Status sync_buckets(const std::string& comm, const char* name, double shard_elements,
                      uint32_t group_size, bool gather) {
    if (comm.empty() || shard_elements <= 0) return {};
    const uint64_t total = at_least_one(shard_elements);
    const uint64_t bucket =
        std::max<uint64_t>(1, spec_.parallelism().dp_bucket_bytes() / shape_.element_bytes);
    const uint64_t buckets = ceil_div(total, bucket);
    const bool zero0 = spec_.parallelism().zero_stage() == 0;
    for (uint64_t b = 0; b < buckets; ++b) {
      const uint64_t elements = std::min(bucket, total - b * bucket);
      std::string& p = out_.prefix();
      p.clear();
      fmt::format_to(std::back_inserter(p), "it{}.{}.bucket{}.", it_, name, b);
      if (gather) {
        COLLIDE_RETURN_IF_ERROR(
            out_.emit(v1::OP_KIND_ALL_GATHER, comm, ceil_div(elements, group_size), "ag"));
      } else if (zero0) {
        COLLIDE_RETURN_IF_ERROR(out_.emit(v1::OP_KIND_ALL_REDUCE, comm, elements, "ar"));
      } else {
        // Buckets are padded to a multiple of the group so each rank owns an equal part.
        COLLIDE_RETURN_IF_ERROR(
            out_.emit(v1::OP_KIND_REDUCE_SCATTER, comm, ceil_div(elements, group_size), "rs"));
      }
    }
    return {};
  }

  Status gradient_sync() {
    const auto [first, last] = shape_.stage_layers[coords_.pp];
    const double layers = last - first;
    const double tp = spec_.parallelism().tp();
    const uint32_t dp = spec_.parallelism().dp();
    const uint32_t edp = dp / spec_.parallelism().ep();
    const double dense = shape_.dp_layer_parameters * layers / tp;
    const double experts = shape_.edp_layer_parameters * layers / tp;
    COLLIDE_RETURN_IF_ERROR(sync_buckets(comms_.dp, "dp", dense, dp, false));
    COLLIDE_RETURN_IF_ERROR(sync_buckets(comms_.edp, "edp", experts, edp, false));
    if (spec_.parallelism().zero_stage() == 0) return {};
    COLLIDE_RETURN_IF_ERROR(sync_buckets(comms_.dp, "dp", dense, dp, true));
    return sync_buckets(comms_.edp, "edp", experts, edp, true);
  }

  const v1::ModelSpec& spec_;
  const JobShape& shape_;
  const Coords coords_;
  const RankComms comms_;
  const bool sequence_parallel_;
  const bool zero3_;
  Emitter out_;
  uint32_t it_ = 0;
  uint32_t next_group_ = 0;
};

}  // namespace

JobShape job_shape(const v1::ModelSpec& spec) {
  const v1::ModelArchitecture& m = spec.model();
  const v1::ParallelismSpec& p = spec.parallelism();
  JobShape s;
  s.micro_batches = micro_batches(spec);
  s.element_bytes = datatype_size(spec.training().datatype());
  const double b = spec.training().micro_batch_size();
  const double seq = m.sequence_length();
  const double h = m.hidden_size();
  const double tp = p.tp();
  s.activation_elements = static_cast<uint64_t>(b * seq * h);
  s.sequence_shard_elements = at_least_one(b * seq * h / tp);
  const bool moe = m.experts() > 1;
  if (moe && p.ep() > 1) {
    const double tokens = p.sequence_parallel() ? b * seq / tp : b * seq;
    s.all_to_all_elements = at_least_one(tokens * m.experts_top_k() * h / p.ep());
  }
  const double layers = m.layers();
  const double expert = static_cast<double>(m.expert_parameters());
  const double dense = static_cast<double>(m.parameters()) - expert;
  s.dp_layer_parameters = (p.ep() > 1 ? dense : dense + expert) / layers;
  s.edp_layer_parameters = p.ep() > 1 ? expert / layers / p.ep() : 0;
  const double active =
      (dense + (moe ? expert * m.experts_top_k() / m.experts() : expert)) / layers;
  const double tokens = b * seq;
  const double forward_flops = 2 * active / tp * tokens + 4 * b * seq * seq * h / tp;
  const double rate = spec.hardware().gpu_tflops() * 1e12 * spec.hardware().efficiency();
  if (rate > 0) {
    s.forward_ns_per_layer = forward_flops / rate * 1e9;
    s.backward_ns_per_layer = 2 * s.forward_ns_per_layer;
  }
  const uint32_t stages = p.pp();
  const uint32_t base = m.layers() / stages;
  const uint32_t extra = m.layers() % stages;
  uint32_t first = 0;
  for (uint32_t stage = 0; stage < stages; ++stage) {
    const uint32_t count = base + (stage < extra ? 1 : 0);
    s.stage_layers.emplace_back(first, first + count);
    first += count;
  }
  return s;
}

RankGenerator::RankGenerator(const v1::ModelSpec& spec)
    : spec_(spec), valid_(validate(spec)), layout_(spec.parallelism()) {
  if (valid_.ok()) shape_ = job_shape(spec);
}

Status RankGenerator::generate(uint32_t rank, const Sink& sink) const {
  COLLIDE_RETURN_IF_ERROR(valid_);
  if (rank >= layout_.world()) {
    return invalid_argument(
        fmt::format("rank {} is outside the {}-rank job", rank, layout_.world()));
  }
  RankRun run(spec_, shape_, layout_, rank, sink);
  return run.run();
}

}  // namespace collide::traces::synth
