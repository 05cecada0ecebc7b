#include "traces/trace_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include "traces/trace_limits.h"

namespace collide::traces {

using google::protobuf::util::ParseDelimitedFromZeroCopyStream;
using google::protobuf::util::SerializeDelimitedToZeroCopyStream;

namespace {

// The header's metadata map would otherwise serialize in an order that changes from process to
// process; the same trace must give the same bytes.
bool write_header_deterministically(const v1::TraceHeader& header,
                                    google::protobuf::io::ZeroCopyOutputStream* out) {
  google::protobuf::io::CodedOutputStream coded(out);
  coded.SetSerializationDeterministic(true);
  coded.WriteVarint32(static_cast<uint32_t>(header.ByteSizeLong()));
  header.SerializeWithCachedSizes(&coded);
  return !coded.HadError();
}

}  // namespace

Result<std::unique_ptr<TraceWriter>> TraceWriter::create(const std::string& path,
                                                         v1::TraceHeader header) {
  std::unique_ptr<TraceWriter> writer(new TraceWriter());
  writer->path_ = path;
  if (path == "-") {
    writer->fd_ = dup(STDOUT_FILENO);
  } else {
    writer->fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (writer->fd_ < 0) return errno_status(errno, fmt::format("creating trace {}", path));
  writer->stream_ = std::make_unique<google::protobuf::io::FileOutputStream>(writer->fd_);
  header.set_magic(std::string(kTraceMagic));
  header.set_schema_version(kTraceSchemaVersion);
  if (!write_header_deterministically(header, writer->stream_.get())) {
    return errno_status(writer->stream_->GetErrno(), fmt::format("writing trace {}", path));
  }
  return writer;
}

TraceWriter::~TraceWriter() { (void)close(); }

Status TraceWriter::write(const v1::Op& op) {
  if (!stream_) return failed_precondition(fmt::format("trace {} is closed", path_));
  if (!SerializeDelimitedToZeroCopyStream(op, stream_.get())) {
    return errno_status(stream_->GetErrno(), fmt::format("writing trace {}", path_));
  }
  ++ops_written_;
  return {};
}

Status TraceWriter::close() {
  if (!stream_) return {};
  const bool flushed = stream_->Flush();
  const int err = stream_->GetErrno();
  stream_.reset();
  const bool closed = ::close(fd_) == 0;
  fd_ = -1;
  if (!flushed) return errno_status(err, fmt::format("writing trace {}", path_));
  if (!closed) return errno_status(errno, fmt::format("closing trace {}", path_));
  return {};
}

Result<std::unique_ptr<TraceReader>> TraceReader::open(const std::string& path) {
  std::unique_ptr<TraceReader> reader(new TraceReader());
  reader->path_ = path;
  reader->fd_ = path == "-" ? dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (reader->fd_ < 0) return errno_status(errno, fmt::format("opening trace {}", path));
  reader->stream_ = std::make_unique<google::protobuf::io::FileInputStream>(reader->fd_);
  bool clean_eof = false;
  if (!ParseDelimitedFromZeroCopyStream(&reader->header_, reader->stream_.get(), &clean_eof) ||
      reader->header_.magic() != kTraceMagic) {
    return invalid_argument(fmt::format(
        "{}: not a collide trace (convert other formats with `collide trace import`)", path));
  }
  if (reader->header_.schema_version() > kTraceSchemaVersion) {
    return invalid_argument(fmt::format("{}: trace schema {} is newer than this collide ({})",
                                        path, reader->header_.schema_version(),
                                        kTraceSchemaVersion));
  }
  COLLIDE_RETURN_IF_ERROR(check_header_limits(reader->header_, path));
  return reader;
}

TraceReader::~TraceReader() {
  stream_.reset();
  if (fd_ >= 0) ::close(fd_);
}

Result<bool> TraceReader::next(v1::Op& op) {
  const int64_t offset = stream_->ByteCount();
  bool clean_eof = false;
  op.Clear();  // parsing merges into the message; a reused op must start empty
  if (ParseDelimitedFromZeroCopyStream(&op, stream_.get(), &clean_eof)) {
    ++ops_read_;
    COLLIDE_RETURN_IF_ERROR(check_op_limits(op, ops_read_, path_));
    return true;
  }
  if (clean_eof) return false;
  return data_loss(fmt::format("{}: op #{} at byte {} is truncated or damaged", path_,
                               ops_read_ + 1, offset));
}

}  // namespace collide::traces
