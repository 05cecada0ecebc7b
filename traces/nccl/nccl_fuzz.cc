// Fuzz harness: the NCCL log parser and the trace builder must never crash, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "traces/nccl/nccl_log_parser.h"
#include "traces/nccl/nccl_trace_builder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collide::traces;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Also cut the input in two pieces, as the importer does with big files.
  const size_t cut = text.find('\n', size / 2);
  const char* b = text.data();
  const char* e = b + size;
  nccl::ParsedLog first;
  nccl::ParsedLog second;
  const char* middle = cut == std::string_view::npos ? e : b + cut + 1;
  nccl::parse_log_piece(b, e, b, middle, first);
  nccl::parse_log_piece(b, e, middle, e, second);
  ImportOptions options;
  options.fill_unobserved_ranks = size % 2 == 1;  // both ways, decided by the input
  nccl::NcclTraceBuilder builder(options);
  builder.start_file("fuzz.log");
  if (!builder.add(first).ok() || !builder.add(second).ok() || !builder.end_file().ok()) return 0;
  if (!builder.finish().ok()) return 0;
  uint64_t ops = 0;
  (void)builder.write_ops([&](const collide::v1::Op&) {
    ++ops;
    return collide::Status();
  });
  if (ops != builder.ops()) __builtin_trap();
  return 0;
}
