#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "chakra/et_def.pb.h"
#include "collide/trace.pb.h"
#include "common/result.h"

// Turns one rank's Chakra nodes, in file order, into that rank's ops:
// - COMM_COLL nodes become collectives (comm_type -> kind, comm_size -> bytes, pg_name -> the
//   communicator, optional `root` attribute -> root); COMM_SEND / COMM_RECV become send / recv to
//   the global rank in comm_dst / comm_src (their comm_type is ignored);
// - COMM_COLL nodes that are the host side of a collective (PyTorch's c10d:: CPU operators, no
//   comm_type) are passed over like COMP nodes: their GPU kernel node is the collective;
// - COMP nodes add their duration to the next op's compute_before_ns (nodes with is_cpu_op set are
//   host work that overlaps the GPU and are not counted);
// - ctrl_deps and data_deps become Op.deps, followed through non-communication nodes to the ops
//   they depend on. A control dependency that lands on the op just before restates issue order,
//   which the trace model already implies, and is dropped; data dependencies are kept whole.
// Chakra carries bytes, not elements: ops get datatype UINT8 and count = bytes. comm_size is the
// whole buffer for reduce-scatter and all-to-all, so Op.bytes (NCCL's per-rank count) is
// comm_size / group size for them and comm_size for the other kinds; comm_size.h gives each kind's
// meaning and where it is established (the exporter writes it the same way).
namespace collide::traces::chakra {

// The communicator name nodes without a pg_name use.
inline constexpr const char* kWorldCommunicator = "world";

// Where each communicator's members sit: global rank -> comm rank.
struct CommIndex {
  std::string id;
  std::vector<uint32_t> ranks;
  std::unordered_map<uint32_t, uint32_t> position;
};
using CommTable = std::map<std::string, CommIndex, std::less<>>;

CommIndex make_comm_index(std::string id, std::vector<uint32_t> ranks);

class RankConverter {
 public:
  RankConverter(uint32_t rank, const CommTable* comms, std::string file);

  // Converts one node. Returns the op it becomes, nullopt for nodes that are not ops, or an error
  // (naming file and record) for a communication node collide cannot use; a caller that skips such
  // nodes keeps going, as the node is still known for later dependencies.
  Result<std::optional<v1::Op>> add(const ChakraProtoMsg::Node& node, uint64_t record);

  uint64_t ops() const { return next_index_; }
  // Dependencies on nodes not seen yet (Chakra files list nodes before their dependents), dropped.
  uint64_t forward_references() const { return forward_refs_; }
  // Host-side records of collectives (node_attrs.h: is_host_side_comm), passed over.
  uint64_t host_side_nodes() const { return host_side_; }

 private:
  struct Known {
    bool is_op = false;
    uint64_t op_index = 0;
    std::vector<uint64_t> deps;  // for other nodes: the ops they resolve to
  };
  void resolve(const google::protobuf::RepeatedField<uint64_t>& ids, std::vector<uint64_t>& out);
  void remember_passthrough(const ChakraProtoMsg::Node& node);
  Result<std::optional<v1::Op>> make_op(const ChakraProtoMsg::Node& node, uint64_t record);

  uint32_t rank_;
  const CommTable* comms_;
  std::string file_;
  std::unordered_map<uint64_t, Known> known_;
  uint64_t next_index_ = 0;
  uint64_t pending_compute_ns_ = 0;
  bool has_pending_compute_ = false;
  uint64_t forward_refs_ = 0;
  uint64_t host_side_ = 0;
};

// Maps Chakra's CollectiveCommType to the trace model; error for values collide does not know.
Result<v1::OpKind> op_kind_from_comm_type(int64_t comm_type);
// The reverse; ALL_TO_ALLV maps to ALL_TO_ALL. Error for send/recv and unknown kinds.
Result<ChakraProtoMsg::CollectiveCommType> comm_type_from_op_kind(v1::OpKind kind);
// Whether the kind names a root (broadcast, reduce, gather, scatter).
bool has_root(v1::OpKind kind);

}  // namespace collide::traces::chakra
