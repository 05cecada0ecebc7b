#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collide/trace.pb.h"
#include "common/result.h"

// One rank's PyTorch NCCL Flight Recorder dump (c10d FlightRecorder: the ring buffer of the
// collectives a process issued last, written when a collective times out), read from its
// decoded form: the pickle and the JSON dump carry the same fields.
namespace collide::traces::flight_recorder {

struct FrGroup {
  std::string name;             // the process group's name, as entries name it
  std::string desc;             // "default_pg", "undefined", ...
  std::vector<uint32_t> ranks;  // global ranks in group-rank order
};

struct FrEntry {
  uint64_t position = 0;  // index in the dump's entries list
  uint64_t record_id = 0;
  std::string pg_name;
  uint64_t collective_seq_id = 0;
  uint64_t p2p_seq_id = 0;
  std::string profiling_name;  // "nccl:all_reduce", "nccl:send 0->1", "nccl:recv 1<-0"
  uint64_t input_numel = 0;    // elements over all input tensors
  uint64_t output_numel = 0;
  std::string input_dtype;     // PyTorch's name of the first input's type: "Float", "BFloat16"
  std::string output_dtype;
  v1::OpState state = v1::OP_STATE_UNSPECIFIED;
  uint64_t time_created_ns = 0;
  std::optional<double> duration_ms;
  bool is_p2p = false;
};

struct FrDump {
  std::string version;
  std::map<std::string, FrGroup> groups;  // pg_config, by name
  std::vector<FrEntry> entries;
};

// Reads the fields collide uses out of a decoded dump. Errors name `file` and the field
// ("rank3.json: entries[5].collective_seq_id: ...").
Result<FrDump> parse_fr_dump(const nlohmann::json& doc, const std::string& file);

// Whether a decoded document looks like a Flight Recorder dump (a dict with "version" and
// "pg_config" or "entries").
bool looks_like_fr_dump(const nlohmann::json& doc);

}  // namespace collide::traces::flight_recorder
