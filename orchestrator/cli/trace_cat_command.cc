// `collide trace cat`: prints a collide trace as JSON lines, the header first, then each op.
#include <iostream>
#include <memory>
#include <string>

#include <google/protobuf/util/json_util.h>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"
#include "traces/trace_io.h"

namespace collide::cli {
namespace {

struct CatOptions {
  std::string path;
  uint64_t limit = 0;
  int64_t rank = -1;
  bool header_only = false;
};

std::string to_json(const google::protobuf::Message& message) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  return json;
}

void run_cat(const CatOptions& opt) {
  auto reader = traces::TraceReader::open(opt.path);
  if (!reader.ok()) fail("trace cat", kExitUsage, reader.status().message());
  std::cout << to_json((*reader)->header()) << "\n";
  if (opt.header_only) return;
  v1::Op op;
  uint64_t printed = 0;
  while (opt.limit == 0 || printed < opt.limit) {
    auto more = (*reader)->next(op);
    if (!more.ok()) fail("trace cat", kExitFailed, more.status().message());
    if (!*more) break;
    if (opt.rank >= 0 && op.rank() != static_cast<uint64_t>(opt.rank)) continue;
    std::cout << to_json(op) << "\n";
    ++printed;
  }
}

}  // namespace

void add_trace_cat_command(CLI::App& trace) {
  auto opt = std::make_shared<CatOptions>();
  CLI::App* cat = trace.add_subcommand("cat", "Print a collide trace as JSON lines");
  cat->add_option("trace", opt->path, "trace file (- for stdin)")->required();
  cat->add_option("--limit", opt->limit, "print at most this many ops (0: all)");
  cat->add_option("--rank", opt->rank, "only the ops of this global rank");
  cat->add_flag("--header", opt->header_only, "print only the header");
  cat->callback([opt] { run_cat(*opt); });
}

}  // namespace collide::cli
