#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"
#include "traces/import/importer.h"
#include "traces/nccl/nccl_log_parser.h"
#include "traces/nccl/op_wire.h"
#include "traces/nccl/packed_ops.h"

// Turns parsed NCCL log records into a collide trace: joins each collective line to the init line
// of its (host, pid, comm pointer), numbers ranks, groups the per-process comm pointers into
// communicators and keeps every rank's ops in issue order.
//
// Ranks. A rank is one (host, pid, cudaDev) of an init line. Its global rank is its rank in the
// largest communicator (the first of that size it joined); ranks outside it, or clashing with
// another, take the lowest free numbers in order of appearance.
//
// Communicators. Init lines of different processes belong to one communicator when they print the
// same commId (2.16+). Without one, a process's k-th communicator of n ranks (among those without
// commId; for ncclCommSplit, with the same color) meets every other process's k-th of n ranks in
// one bucket; a bucket holding several communicators (e.g. eight TP groups) is split by taking
// its members in global-rank order and giving each to the first communicator still missing that
// member's comm rank. That recovers both contiguous groups (TP) and strided ones (DP). A
// communicator with comm ranks missing from the logs is reported; its rank list then holds only
// the members present, in comm-rank order.
//
// Logs without init lines (NCCL_DEBUG_SUBSYS=COLL): the collective lines are kept until the end,
// then ranks and communicators are inferred from them (comm_inference.h) and the trace says so.
// Once any init line has been read, a collective of a comm no init line announced is a problem.
//
// The world size is NCCL's nranks of the largest communicator, even when the logs show fewer
// ranks (a log of one node of several); the ranks never seen are listed in the header's metadata.
// Ranks' ops are paired by opCount: ops before the opCount every member of a communicator shows
// are left out (see align_by_op_count).
//
// Rings and trees come from GRAPH lines printed by a process before its next `Init COMPLETE` (per
// CUDA device); a ring order cut with `...` is rebuilt from the ranks' `Ring` neighbour lines when
// all are present, and dropped otherwise.
namespace collide::traces::nccl {

class NcclTraceBuilder {
 public:
  explicit NcclTraceBuilder(const ImportOptions& options);

  // Pieces of one file are added in order after start_file; line numbers run on across them.
  void start_file(const std::string& name);
  // In strict mode, the first problem (in input order) is returned as an error. The piece's ops
  // go to `ops` when given (they are then the caller's to write, with serialize_ops below), else
  // to the builder's own store.
  Status add(const ParsedLog& piece, OpSink* ops = nullptr);
  Status end_file();

  // Numbers ranks, groups communicators; after this, header() and write_ops() are ready.
  Status finish();
  const v1::TraceHeader& header() const { return header_; }
  uint64_t ops() const { return ops_.size(); }  // in the builder's own store
  // Hands every op to `sink`, in input order (each rank's ops in its issue order).
  Status write_ops(const std::function<Status(const v1::Op&)>& sink) const;
  // Appends ops [begin, end) to `out` as a trace file holds them (each preceded by its length as
  // a varint32), the same bytes as write_ops' messages serialized; threads may serialize disjoint
  // ranges at once.
  void serialize_ops(size_t begin, size_t end, WireBuffer& out) const;
  // The same for ops another builder fed the same init lines stored (see same_layout).
  void serialize_ops(const PackedOps& ops, WireBuffer& out) const;
  const PackedOps& stored_ops() const { return ops_; }
  // Appends one op that another builder's add() gave its sink, as serialize_ops would: a builder
  // fed the same init lines writes another's ops (see same_layout). False (nothing written) if
  // this builder has no such member, when the two saw different init lines. `writer` keeps what
  // it can reuse from one op to the next.
  bool write_op(uint32_t member, const OpWireFields& op, OpWriter& writer, WireBuffer& out) const;

  // Whether both finished builders write the same header and map every op's member to the same
  // rank and communicator: then one may serialize the other's ops.
  bool same_layout(const NcclTraceBuilder& other) const;

  ImportReport& report() { return report_; }

  // Whether the piece holds a TUNING choice (or size) that the pieces added so far did not: the
  // header's `nccl.tuning` would change with it.
  bool extends_tuning(const ParsedLog& piece) const;

  // An error when the input held no collective at all (finish() first): a trace without ops
  // replays nothing, and the usual cause is a log taken without COLL in NCCL_DEBUG_SUBSYS.
  Status check_has_ops() const;

  // Whether finish() found ops to leave out that another builder wrote as it read (see
  // align_by_op_count): the import must then start over with the ops stored.
  bool needs_stored_pass() const { return needs_stored_pass_; }

 private:
  struct Process {
    std::string host;
    uint32_t pid = 0;
    std::vector<std::string> nics;
    std::vector<uint32_t> files;  // that hold its lines, by index into files_
    int32_t device = -1;          // the `[dev]` of its lines (its first seen)
  };
  struct Member {  // one process's view of one communicator: an init line
    uint32_t process = 0;
    int32_t cuda_dev = -1;
    uint64_t comm = 0;
    int32_t rank = 0;
    int32_t nranks = 0;
    bool complete = false;
    bool split = false;
    bool inferred = false;  // placed by infer_layout, not by an init line
    bool p2p = false;       // issued a Send or Recv (whose opCounts need not agree across ranks)
    uint64_t first_op_count = UINT64_MAX;  // of its first op
    uint64_t drop_below = 0;  // its ops of lower opCount have no counterpart (align_by_op_count)
    int64_t color = 0;
    std::string comm_id;
    uint32_t slot = 0;
    uint32_t group = 0;
    std::vector<GraphRecord> graph;
  };
  struct SlotState {
    uint64_t next_index = 0;
    // Grouping of p2p ops that share an opCount.
    uint64_t op_count = 0;
    uint32_t member = UINT32_MAX;
    uint32_t group = 0;
  };

  Status problem(uint64_t line, std::string what);
  Status problem_in(uint32_t file, uint64_t line, std::string what);
  // Counts a piece's lines of a kind not read in the report, by kind.
  void add_unread(const UnreadKind& kind);
  // A collective line of a comm no init line announced. Before any init line of the input they
  // are kept (see infer_layout); after one, each is a problem, as are those kept.
  Status orphan(const CollRecord& rec, uint32_t process);
  Status report_orphans();
  // COLL-only input: communicators, ranks and comm ranks inferred from the collective lines.
  Status infer_layout();
  // Ranks' logs that start at different points of a communicator's life (rotated, cut, a rank
  // restarted) would pair different collectives by position: ops before the opCount every member
  // shows are left out, and said so. Only for communicators of collectives alone, whose opCounts
  // run in step on every rank.
  Status align_by_op_count();
  void drop_unmatched_ops();
  // The input files that hold lines of these processes, by name, for messages.
  std::string files_of(const std::set<uint32_t>& processes) const;
  // ImportOptions::fill_unobserved_ranks: the ops of the world communicator, copied from its
  // lowest rank shown to each rank never shown (after member_out_ is set).
  void fill_unobserved_ranks(const std::vector<uint32_t>& unobserved);
  Status on_init(const InitRecord& rec, uint32_t process);
  // False if the op's comm has no init line yet (the caller reports it with unknown_comm): the
  // per-op path returns no Status, which costs a construction and destruction per op.
  bool on_coll(const CollRecord& rec, uint32_t process);
  void append_op(const CollRecord& rec, uint32_t member, uint64_t line, uint32_t file);
  Status unknown_comm(const CollRecord& rec, uint32_t process);
  void on_graph(const GraphRecord& rec, uint32_t process);
  uint32_t slot_of(uint32_t process, int32_t dev);
  struct CommKey {
    uint32_t process;
    uint64_t comm;
    bool operator==(const CommKey&) const = default;
  };
  struct CommKeyHash {
    size_t operator()(const CommKey& k) const {
      return static_cast<size_t>((k.comm * 0x9E3779B97F4A7C15ull) ^ (k.comm >> 29) ^
                                 (static_cast<uint64_t>(k.process) * 0xC2B2AE3D27D4EB4Full));
    }
  };
  void fill_op(const PackedOpView& c, v1::Op& op) const;
  void serialize_packed(const PackedOps& ops, size_t begin, size_t end, WireBuffer& out) const;
  static uint64_t dev_key(uint32_t process, int32_t dev) {
    return (static_cast<uint64_t>(process) << 32) | static_cast<uint32_t>(dev);
  }
  Status assign_global_ranks();
  // ImportOptions::world_size: taken when no line printed nranks (COLL lines of old versions
  // without init lines), refused when it disagrees with the nranks NCCL printed.
  Status apply_world_size_option(uint32_t& world);
  Status group_communicators();
  void add_graph(const std::vector<uint32_t>& members, v1::Communicator& comm);

  ImportOptions options_;
  ImportReport report_;
  std::vector<std::string> files_;
  uint64_t line_base_ = 0;
  uint64_t file_nccl_lines_ = 0;

  std::vector<Process> processes_;
  std::unordered_map<std::string, std::unordered_map<uint32_t, uint32_t>> process_index_;
  std::vector<uint32_t> piece_process_;  // piece's process index -> ours
  std::vector<Member> members_;
  // (process, comm pointer) -> member; a comm pointer reused after a destroy points to the newest.
  std::unordered_map<CommKey, uint32_t, CommKeyHash> live_;
  // The same, per process, for the per-op lookup: a process has a handful of communicators, and
  // scanning them beats hashing; beyond kScannedComms live_ is used.
  static constexpr size_t kScannedComms = 16;
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> process_comms_;
  std::unordered_map<uint64_t, std::vector<GraphRecord>> pending_graph_;  // (process, dev)
  std::unordered_map<uint64_t, uint32_t> slot_index_;                     // (process, dev) -> slot
  std::vector<uint32_t> slot_process_;
  std::vector<int32_t> slot_dev_;
  std::vector<uint32_t> slot_global_;
  std::vector<SlotState> slot_state_;
  uint32_t next_group_id_ = 1;
  uint32_t last_member_ = UINT32_MAX;  // cache of the last lookup
  uint32_t last_process_ = UINT32_MAX;
  uint64_t last_comm_ = 0;
  struct MemberOut {  // what writing an op needs of its member, compact
    uint32_t rank;
    uint32_t group;
  };
  std::vector<MemberOut> member_out_;  // by member, set by finish()
  PackedOps ops_;
  // Collective lines met before any init line, with where they were: kept until an init line
  // (then problems) or the end (then infer_layout places them).
  struct Orphan {
    CollRecord rec;  // rec.line is the file's line, rec.process ours
    uint32_t file;
  };
  std::vector<Orphan> orphans_;
  std::vector<TuningRecord> tunings_;  // NCCL's choices, for the header's `nccl.tuning`
  bool seen_init_ = false;
  bool nranks_printed_ = false;  // a COLL line without init lines printed `[nranks=N]`
  bool needs_stored_pass_ = false;
  OpSink* sink_ = &ops_;    // where on_coll puts ops
  OpWireFields op_fields_;  // on_coll's, reused
  uint64_t op_total_ = 0;
  std::array<uint32_t, 256> element_size_{};  // by v1::DataType: a table, as it runs per op
  std::vector<std::string> group_ids_;
  std::vector<CommField> group_fields_;  // group_ids_ in wire form, when all fit a CommField
  v1::TraceHeader header_;
};

}  // namespace collide::traces::nccl
