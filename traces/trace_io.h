#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "collide/trace.pb.h"
#include "common/result.h"

namespace google::protobuf::io {
class FileInputStream;
class FileOutputStream;
}  // namespace google::protobuf::io

// Reading and writing collide trace files (see proto/collide/trace.proto) one operation at a time,
// so memory stays flat however long the trace is.
namespace collide::traces {

inline constexpr std::string_view kTraceMagic = "collide-trace";
inline constexpr uint32_t kTraceSchemaVersion = 1;

class TraceWriter {
 public:
  // Creates (or truncates) `path`; "-" writes to stdout. Fills in the header's magic and version.
  static Result<std::unique_ptr<TraceWriter>> create(const std::string& path,
                                                     v1::TraceHeader header);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  Status write(const v1::Op& op);
  // Flushes and closes; an error here means the file is incomplete.
  Status close();
  uint64_t ops_written() const { return ops_written_; }

 private:
  TraceWriter() = default;
  std::string path_;
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileOutputStream> stream_;
  uint64_t ops_written_ = 0;
};

class TraceReader {
 public:
  // Opens `path` ("-" reads stdin) and reads its header; a file that is not a collide trace, or
  // of a newer schema, is an error naming the file.
  static Result<std::unique_ptr<TraceReader>> open(const std::string& path);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const v1::TraceHeader& header() const { return header_; }
  // Reads the next op into `op`: true if there was one, false at the end of the file. A truncated
  // or damaged record is an error naming the file, the op's number and its byte offset.
  Result<bool> next(v1::Op& op);
  uint64_t ops_read() const { return ops_read_; }

 private:
  TraceReader() = default;
  std::string path_;
  int fd_ = -1;
  std::unique_ptr<google::protobuf::io::FileInputStream> stream_;
  v1::TraceHeader header_;
  uint64_t ops_read_ = 0;
};

}  // namespace collide::traces
