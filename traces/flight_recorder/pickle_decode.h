#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

// A decoder for the data-only part of Python's pickle format (protocols 2 to 5): dicts, lists,
// tuples, sets, str, bytes, int, float, bool and None, with the memo and framing. It is a data
// reader, not an unpickler: every opcode that would import a name, call something or build an
// object (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID,
// BINPERSID, ...) is refused with an error, so a hostile file can never run code. PyTorch's
// Flight Recorder dumps use only the data opcodes.
namespace collide::traces::flight_recorder {

struct PickleLimits {
  uint32_t max_depth = 64;  // containers inside containers
  // Values a decoded document may hold once shared (memoized) parts are copied out: bounds what
  // a small file that refers to one list many times can grow into. The bound applied is the
  // smaller of this and max(2^16, 16 per input byte); plain data holds fewer values than bytes.
  uint64_t max_values = 1ull << 26;
  // Dict entries under these keys are left out of the result (and not counted): parts a reader
  // does not use, such as a Flight Recorder entry's stack frames.
  std::vector<std::string> skipped_keys;
};

// Decodes `bytes` (the whole pickle, up to its STOP) into JSON values: tuples and sets become
// arrays, bytes become binary values, dict keys must be str (int keys become their decimal
// text). Errors name `file`, the byte offset and the opcode.
Result<nlohmann::json> decode_pickle(std::string_view bytes, std::string_view file,
                                     const PickleLimits& limits = {});

// Whether `bytes` start like a pickle of protocol 2 or later (PROTO opcode).
bool looks_like_pickle(std::string_view bytes);

}  // namespace collide::traces::flight_recorder
