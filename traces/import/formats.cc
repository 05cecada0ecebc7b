#include "traces/import/formats.h"

#include "traces/aicb/aicb_import.h"
#include "traces/chakra/chakra_import.h"
#include "traces/flight_recorder/fr_import.h"
#include "traces/inspector/inspector_import.h"
#include "traces/kineto/kineto_import.h"
#include "traces/nccl/nccl_import.h"

namespace collide::traces {

const std::vector<ImportFormat>& import_formats() {
  // One entry per importer; each lives in its own folder under traces/.
  static const std::vector<ImportFormat> formats = {
      {"nccl", "NCCL/RCCL debug logs (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,COLL[,GRAPH,NET])",
       &nccl::import_nccl_logs},
      {"chakra", "Chakra execution traces: <prefix>.<rank>.et files or a directory of them, "
                 "plus an optional comm-group .json",
       &chakra::import_chakra},
      {"aicb", "AICB/SimAI workload text (one file), expanded per rank (Megatron layout)",
       &aicb::import_aicb},
      {"flight-recorder", "PyTorch NCCL Flight Recorder dumps (pickle or JSON), one per rank, "
                          "files or a directory; keeps each op's state for the hang frontier",
       &flight_recorder::import_flight_recorder},
      {"inspector", "NCCL Inspector plugin output (JSON lines, one file per process, or a "
                    "directory): sampled collectives with their measured execution times",
       &inspector::import_nccl_inspector},
      {"kineto", "PyTorch profiler (Kineto) Chrome traces with distributedInfo, one per rank, or a "
                 "directory of .json files: collectives' args and kernel times",
       &kineto::import_kineto},
  };
  return formats;
}

const ImportFormat* find_import_format(std::string_view name) {
  for (const ImportFormat& format : import_formats()) {
    if (format.name == name) return &format;
  }
  return nullptr;
}

}  // namespace collide::traces
