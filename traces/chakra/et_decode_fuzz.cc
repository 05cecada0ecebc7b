// Fuzz harness for the Chakra .et decoder and the node-to-op conversion: any bytes must give ops
// or an error, never a crash, a hang or unbounded memory.
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstddef>
#include <cstdint>

#include "traces/chakra/et_stream.h"
#include "traces/chakra/rank_converter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace collide::traces::chakra;
  static const CommTable* const kComms = [] {
    auto* table = new CommTable();
    table->emplace(kWorldCommunicator, make_comm_index(kWorldCommunicator, {0, 1, 2, 3}));
    table->emplace("tp", make_comm_index("tp", {0, 1}));
    return table;
  }();
  google::protobuf::io::ArrayInputStream input(data, static_cast<int>(size));
  EtDecoder decoder(&input, "fuzz.0.et");
  ChakraProtoMsg::GlobalMetadata metadata;
  if (!decoder.read_metadata(metadata).ok()) return 0;
  RankConverter converter(0, kComms, "fuzz.0.et");
  ChakraProtoMsg::Node node;
  for (;;) {
    const uint64_t record = decoder.records_read();
    auto more = decoder.next(node);
    if (!more.ok() || !*more) break;
    (void)converter.add(node, record);
  }
  return 0;
}
