#include "orchestrator/run/job_traces.h"

#include <memory>
#include <set>

#include <fmt/format.h>

#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

struct OpenJob {
  const JobTrace* job = nullptr;
  std::unique_ptr<traces::TraceReader> reader;
  uint32_t first_source_file = 0;  // where its source files start in the merged header
};

}  // namespace

Status merge_job_traces(const std::vector<JobTrace>& jobs, uint32_t world, const std::string& out) {
  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_SYNTHETIC);
  header.set_world_size(world);
  std::vector<OpenJob> open;
  std::set<uint32_t> taken;
  std::string described;
  for (const JobTrace& job : jobs) {
    auto reader = traces::TraceReader::open(job.path);
    if (!reader.ok()) return reader.status().with_context("job " + job.name);
    const v1::TraceHeader& own = (*reader)->header();
    if (own.world_size() != job.global_ranks.size()) {
      return invalid_argument(fmt::format("job {}: its trace has {} ranks but it runs on {}", job.name,
                                          own.world_size(), job.global_ranks.size()));
    }
    for (uint32_t g : job.global_ranks) {
      if (g >= world || !taken.insert(g).second) {
        return invalid_argument(fmt::format("job {}: rank {} is outside the testbed or another job's", job.name, g));
      }
    }
    const auto global = [&job](uint32_t r) { return job.global_ranks.at(r); };
    for (v1::RankInfo info : own.ranks()) {
      if (info.rank() >= job.global_ranks.size()) continue;  // a header naming ranks it does not hold
      info.set_rank(global(info.rank()));
      *header.add_ranks() = std::move(info);
    }
    for (v1::Communicator comm : own.communicators()) {
      comm.set_id(job.name + "/" + comm.id());
      comm.set_name(job.name + "/" + comm.name());
      for (uint32_t& r : *comm.mutable_ranks()) {
        if (r >= job.global_ranks.size()) {
          return invalid_argument(fmt::format("job {}: communicator {} names rank {} of {}", job.name, comm.id(), r,
                                              job.global_ranks.size()));
        }
        r = global(r);
      }
      *header.add_communicators() = std::move(comm);
    }
    OpenJob o{&job, std::move(reader).value(), static_cast<uint32_t>(header.source_files_size())};
    for (const std::string& f : own.source_files()) header.add_source_files(f);
    const auto workload = own.metadata().find("workload");
    described += fmt::format("{}{}: {}", described.empty() ? "" : "; ", job.name,
                             workload == own.metadata().end() ? job.path : workload->second);
    open.push_back(std::move(o));
  }
  (*header.mutable_metadata())["workload"] = described;
  auto writer = traces::TraceWriter::create(out, std::move(header));
  if (!writer.ok()) return writer.status();
  for (OpenJob& o : open) {
    v1::Op op;
    for (;;) {
      auto more = o.reader->next(op);
      if (!more.ok()) return more.status().with_context("job " + o.job->name);
      if (!*more) break;
      if (op.rank() >= o.job->global_ranks.size()) {
        return invalid_argument(fmt::format("job {}: an op of rank {} of {}", o.job->name, op.rank(),
                                            o.job->global_ranks.size()));
      }
      op.set_rank(o.job->global_ranks[op.rank()]);
      op.set_comm(o.job->name + "/" + op.comm());
      if (op.source_line() != 0) op.set_source_file(op.source_file() + o.first_source_file);
      COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
    }
  }
  return (*writer)->close();
}

}  // namespace collide::orchestrator
