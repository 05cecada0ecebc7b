#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "collide/trace.pb.h"

// Where a hung job stopped, from a trace whose ops carry their state (Flight Recorder dumps are
// written when a collective times out). Per communicator, the frontier is its first collective
// that not every member completed; each member is said to have completed it, started it, only
// scheduled it, not issued it (the member's ops stop before it), or left no record (no dump of
// that rank). Point-to-point ops that did not complete are listed beside.
//
// Collectives are identified by Op.op_count (the source's sequence number in its communicator);
// a member's collectives older than those its record holds count as completed. Memory grows
// with communicators, members and ops that did not complete, never with completed ops.
namespace collide::traces::analysis {

struct FrontierCollective {
  std::string comm;     // communicator id
  std::string name;     // communicator name
  uint64_t seq = 0;     // Op.op_count of the collective
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;  // as one member that holds it recorded it
  uint64_t bytes = 0;
  std::vector<uint32_t> completed;   // global ranks
  std::vector<uint32_t> started;
  std::vector<uint32_t> scheduled;
  std::vector<uint32_t> not_issued;
  std::vector<uint32_t> no_record;   // members the trace has no dump of
};

struct StuckPointToPoint {
  uint32_t rank = 0;
  std::string comm;
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  int32_t peer = -1;  // comm rank
  uint64_t seq = 0;
  v1::OpState state = v1::OP_STATE_UNSPECIFIED;
};

struct HangFrontier {
  bool has_states = false;  // some op carries a state: the trace can have a frontier
  std::vector<FrontierCollective> collectives;  // communicators that hang, in header order
  std::vector<StuckPointToPoint> point_to_point;  // the first kMaxStuckPointToPoint
  uint64_t point_to_point_total = 0;
  bool hung() const { return !collectives.empty() || point_to_point_total > 0; }
};

class HangFrontierAccumulator {
 public:
  static constexpr size_t kMaxStuckPointToPoint = 64;

  explicit HangFrontierAccumulator(const v1::TraceHeader& header);
  void add(const v1::Op& op);
  HangFrontier finish() &&;

 private:
  struct Pending {
    v1::OpKind kind;
    uint64_t bytes;
    v1::OpState state;
  };
  struct Member {
    uint32_t rank = 0;
    bool recorded = false;     // a dump of this rank exists
    bool any = false;          // some collective of it was seen
    uint64_t first_seq = 0;    // its oldest collective in the record
    uint64_t last_seq = 0;     // its newest
    std::map<uint64_t, Pending> pending;  // its collectives that did not complete, by seq
  };
  struct Comm {
    std::string id;
    std::string name;
    std::unordered_map<uint32_t, uint32_t> comm_rank;
    std::vector<Member> members;
  };
  HangFrontier frontier_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<Comm> comms_;
};

// "comm 0 (default_pg): collective #12 all_reduce (4194304 B) not completed: not issued by
// ranks 5; scheduled on 3; started on 0,1,2,4,6,7"
std::string describe(const FrontierCollective& frontier);
std::string describe(const StuckPointToPoint& op);

// The frontier as `collide trace stats` shows it: a section of the table (empty when the trace
// carries no op states) and a JSON object with the ranks of each group as lists.
std::string frontier_table(const HangFrontier& frontier);
nlohmann::json frontier_json(const HangFrontier& frontier);

}  // namespace collide::traces::analysis
