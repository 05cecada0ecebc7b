#include "traces/aicb/aicb_import.h"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "traces/aicb/aicb_expand.h"
#include "traces/aicb/aicb_workload.h"
#include "traces/trace_io.h"

namespace collide::traces::aicb {

Result<ImportReport> import_aicb(const std::vector<std::string>& inputs, const std::string& output,
                                 const ImportOptions& options) {
  if (inputs.size() != 1) {
    return invalid_argument(
        fmt::format("an AICB import reads one workload file, got {}", inputs.size()));
  }
  const std::string& path = inputs[0];
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(fmt::format("{}: cannot open the AICB workload", path));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};

  ImportReport report;
  auto workload = parse_workload(text, path, options, report);
  if (!workload.ok()) return workload.status();
  auto expansion = Expansion::create(*workload, options, report);
  if (!expansion.ok()) return expansion.status();

  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_AICB);
  header.add_source_files(path);
  const uint32_t world = expansion->layout().world();
  header.set_world_size(world);
  for (uint32_t r = 0; r < world; ++r) {
    v1::RankInfo* info = header.add_ranks();
    info->set_rank(r);
    info->set_device(-1);
  }
  for (const v1::Communicator& c : expansion->communicators()) *header.add_communicators() = c;
  expansion->describe(header);

  auto writer = TraceWriter::create(output, header);
  if (!writer.ok()) return writer.status();
  for (uint32_t r = 0; r < world; ++r) {
    for (const v1::Op& op : expansion->rank_ops(r)) {
      COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
      ++report.ops;
    }
    if (options.progress) options.progress(r + 1, world);
  }
  COLLIDE_RETURN_IF_ERROR((*writer)->close());
  report.ranks = world;
  report.communicators = static_cast<uint32_t>(header.communicators_size());
  report.units_read = workload->lines_read;
  return report;
}

}  // namespace collide::traces::aicb
