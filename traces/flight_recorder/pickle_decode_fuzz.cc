// Fuzz harness for the pickle decoder and the Flight Recorder dump reader: any bytes must give a
// value or an error, never a crash, a hang, unbounded memory or a call into anything the data
// names (the decoder has no way to call: code-running opcodes are refused).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "traces/flight_recorder/fr_dump.h"
#include "traces/flight_recorder/pickle_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collide::traces::flight_recorder;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  PickleLimits limits;
  limits.max_values = 1u << 20;  // keeps each run small; the bound itself is what is tested
  auto doc = decode_pickle(bytes, "fuzz.pkl", limits);
  if (doc.ok() && looks_like_fr_dump(*doc)) (void)parse_fr_dump(*doc, "fuzz.pkl");
  return 0;
}
