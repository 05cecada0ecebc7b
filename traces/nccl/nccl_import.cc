#include "traces/nccl/nccl_import.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "common/logging.h"
#include "traces/nccl/nccl_log_parser.h"
#include "traces/nccl/nccl_trace_builder.h"
#include "traces/trace_io.h"

namespace collide::traces::nccl {
namespace {

constexpr size_t kPieceBytes = 16u << 20;
constexpr size_t kMaxPiecesAhead = 6;  // bounds the memory of pieces in flight
constexpr size_t kBatch = 1 << 15;     // stored ops serialized by one thread at a time
// Pieces in a row without init lines after which an import takes its layout as final.
constexpr size_t kSettledPieces = 2;
// Inputs above this are streamed (see nccl_import.h): their packed ops would take about 1 GB.
constexpr uint64_t kStreamAboveBytes = 6ull << 30;

// A read-only mapping of a whole file, released on destruction.
class MappedFile {
 public:
  static Result<std::unique_ptr<MappedFile>> open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, fmt::format("opening NCCL log {}", path));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return errno_status(err, fmt::format("reading NCCL log {}", path));
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd);
      return invalid_argument(fmt::format("{}: is a directory; give the log files", path));
    }
    auto file = std::unique_ptr<MappedFile>(new MappedFile());
    file->size_ = static_cast<size_t>(st.st_size);
    if (file->size_ > 0) {
      void* p = mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        return errno_status(err, fmt::format("mapping NCCL log {}", path));
      }
      madvise(p, file->size_, MADV_SEQUENTIAL);
      file->data_ = static_cast<const char*>(p);
    }
    ::close(fd);
    return file;
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  }
  const char* data() const { return data_; }
  size_t size() const { return size_; }

  // Gives back the pages of a range already parsed; they are read again from the file if needed.
  void release(size_t from, size_t to) const {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t a = (from + page - 1) / page * page;
    const size_t b = to / page * page;
    if (data_ != nullptr && b > a) madvise(const_cast<char*>(data_) + a, b - a, MADV_DONTNEED);
  }

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
};

struct Piece {
  size_t file = 0;
  size_t begin = 0;
  size_t end = 0;
  bool last_of_file = false;
};

// What the stages below hand each other for a piece in flight; reused from piece to piece (fresh
// memory is faulted in and zeroed page by page, which costs more than the reading).
struct Work {
  ParsedLog log;
  WireBuffer wire;  // the piece's ops as the trace holds them, when streaming
  bool parsed = false;
};

// Runs the stages of an import over the pieces: workers parse pieces ahead (in any order), and
// the calling thread resolves them in input order, and parses one itself whenever the next is not
// ready: one thread per core in all, each always busy (with a thread that only resolved, a core
// sat idle whenever the parsers ran out of room ahead of it). At most kMaxPiecesAhead pieces are
// in flight, which bounds the memory of this stage whatever the input size.
class Pipeline {
 public:
  struct Stages {
    bool skip_collectives = false;
    // Resolves a parsed piece (the calling thread, in order).
    std::function<Status(const Piece&, Work&)> resolve;
  };

  Pipeline(const std::vector<std::unique_ptr<MappedFile>>& files, const std::vector<Piece>& pieces,
           unsigned threads)
      : files_(files), pieces_(pieces), threads_(threads) {}

  Status run(const Stages& stages) {
    stages_ = &stages;
    slots_.clear();
    slots_.resize(pieces_.size());
    next_parse_ = retired_ = 0;
    stop_ = false;
    std::vector<std::thread> workers;
    for (unsigned t = 1; t < std::min<size_t>(threads_, pieces_.size()); ++t)
      workers.emplace_back([this] { work(); });
    Status status = drive();
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers) t.join();
    return status;
  }

 private:
  void work() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || can_parse(); });
      if (stop_) return;
      parse_next(lock);
    }
  }

  // Parses the next piece not yet taken; called (and returns) with `lock` held.
  void parse_next(std::unique_lock<std::mutex>& lock) {
    const size_t i = next_parse_++;
    slots_[i] = take_spare();
    Work& w = *slots_[i];
    lock.unlock();
    const Piece& piece = pieces_[i];
    const MappedFile& f = *files_[piece.file];
    if (f.data() != nullptr) {
      parse_log_piece(f.data(), f.data() + f.size(), f.data() + piece.begin, f.data() + piece.end,
                      w.log, stages_->skip_collectives);
    }
    lock.lock();
    w.parsed = true;
    cv_.notify_all();
  }

  bool can_parse() const {
    return next_parse_ < pieces_.size() && next_parse_ < retired_ + kMaxPiecesAhead;
  }

  // Called with mu_ held.
  std::unique_ptr<Work> take_spare() {
    if (spare_.empty()) return std::make_unique<Work>();
    std::unique_ptr<Work> w = std::move(spare_.back());
    spare_.pop_back();
    return w;
  }

  // Hands a finished piece's memory back and lets the workers run ahead.
  void retire(size_t i) {
    Work& w = *slots_[i];
    files_[pieces_[i].file]->release(pieces_[i].begin, pieces_[i].end);
    w.log.processes.clear();
    w.log.colls.clear();
    w.log.inits.clear();
    w.log.graphs.clear();
    w.log.versions.clear();
    w.log.problems.clear();
    w.log.tunings.clear();
    w.log.unread.clear();
    w.log.lines = w.log.nccl_lines = 0;
    w.wire.clear();
    w.parsed = false;
    {
      std::lock_guard lock(mu_);
      spare_.push_back(std::move(slots_[i]));
      retired_ = i + 1;
    }
    cv_.notify_all();
  }

  // The calling thread: resolves in order, and parses while the next piece is not ready.
  Status drive() {
    for (size_t next = 0; next < pieces_.size(); ++next) {
      {
        std::unique_lock lock(mu_);
        auto ready = [&] { return slots_[next] != nullptr && slots_[next]->parsed; };
        while (!ready()) {
          if (can_parse()) {
            parse_next(lock);
          } else {
            cv_.wait(lock, [&] { return ready() || can_parse(); });
          }
        }
      }
      COLLIDE_RETURN_IF_ERROR(stages_->resolve(pieces_[next], *slots_[next]));
      retire(next);
    }
    return {};
  }

  const std::vector<std::unique_ptr<MappedFile>>& files_;
  const std::vector<Piece>& pieces_;
  const unsigned threads_;
  const Stages* stages_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Work>> slots_;  // by piece, while in flight
  std::vector<std::unique_ptr<Work>> spare_;
  size_t next_parse_ = 0;
  size_t retired_ = 0;
  bool stop_ = false;
};

// Piece boundaries of one file, each at a line start.
void cut(const MappedFile& f, size_t file_index, std::vector<Piece>& pieces) {
  size_t begin = 0;
  const size_t first = pieces.size();
  while (begin < f.size()) {
    size_t end = std::min(f.size(), begin + kPieceBytes);
    if (end < f.size()) {
      const void* nl = std::memchr(f.data() + end, '\n', f.size() - end);
      end = nl == nullptr ? f.size()
                          : static_cast<size_t>(static_cast<const char*>(nl) - f.data()) + 1;
    }
    pieces.push_back({file_index, begin, end, false});
    begin = end;
  }
  // An empty file still gets its (empty) piece.
  if (pieces.size() == first) pieces.push_back({file_index, 0, 0, false});
  pieces.back().last_of_file = true;
}

// Appends bytes to an open file (or stdout).
class OutputFile {
 public:
  static Result<std::unique_ptr<OutputFile>> open_for_append(const std::string& path) {
    auto out = std::unique_ptr<OutputFile>(new OutputFile(path));
    if (path != "-") {
      out->fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      if (out->fd_ < 0) return errno_status(errno, fmt::format("writing trace {}", path));
    }
    return out;
  }
  ~OutputFile() {
    if (fd_ != STDOUT_FILENO && fd_ >= 0) ::close(fd_);
  }

  Status write(const char* p, size_t left) {
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return errno_status(errno, fmt::format("writing trace {}", path_));
      p += n;
      left -= static_cast<size_t>(n);
    }
    return {};
  }

  Status close() {
    if (fd_ == STDOUT_FILENO) return {};
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return errno_status(errno, fmt::format("closing trace {}", path_));
    return {};
  }

 private:
  explicit OutputFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
  int fd_ = STDOUT_FILENO;
};

// Writes each op in its final form as it is resolved, with the layout (ranks and communicators)
// of a builder that saw the same init lines in a first pass.
class FinalOps final : public OpSink {
 public:
  explicit FinalOps(const NcclTraceBuilder& layout) : layout_(layout) {}
  void write_to(WireBuffer& out) { out_ = &out; }
  void append(uint32_t member, const OpWireFields& op) override {
    if (!layout_.write_op(member, op, writer_, *out_)) complete_ = false;
  }
  // False if an op's member was unknown to the layout (the passes saw different init lines).
  bool complete() const { return complete_; }

 private:
  const NcclTraceBuilder& layout_;
  WireBuffer* out_ = nullptr;
  OpWriter writer_;
  bool complete_ = true;
};

// A trace file holding only `header`, to append ops to.
Status start_trace(const std::string& output, const v1::TraceHeader& header) {
  auto writer = TraceWriter::create(output, header);
  if (!writer.ok()) return writer.status();
  return (*writer)->close();
}

// Writes the header through TraceWriter, then the ops, serialized on all threads in batches and
// appended in order (the trace file's delimited format, as TraceWriter writes it).
Status write_trace(const NcclTraceBuilder& builder, const std::string& output, unsigned threads) {
  COLLIDE_RETURN_IF_ERROR(start_trace(output, builder.header()));
  int fd = STDOUT_FILENO;
  if (output != "-") {
    fd = ::open(output.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) return errno_status(errno, fmt::format("writing trace {}", output));
  }
  // Rounds of `threads` batches: while the threads serialize one round into one set of buffers,
  // this thread writes the previous round from the other set.
  const size_t per_round = kBatch * threads;
  const size_t rounds = (builder.ops() + per_round - 1) / per_round;
  std::vector<WireBuffer> sets[2] = {std::vector<WireBuffer>(threads),
                                     std::vector<WireBuffer>(threads)};
  auto start_round = [&](size_t round, std::vector<WireBuffer>& buffers) {
    std::vector<std::thread> serializers;
    for (unsigned t = 0; t < threads; ++t) {
      buffers[t].clear();
      const size_t from = round * per_round + t * kBatch;
      if (from >= builder.ops()) break;
      serializers.emplace_back([&builder, &buffers, t, from] {
        builder.serialize_ops(from, from + kBatch, buffers[t]);
      });
    }
    return serializers;
  };
  Status status;
  auto write_all = [&](const WireBuffer& buffer) {
    const char* p = buffer.data();
    size_t left = buffer.size();
    while (left > 0 && status.ok()) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        status = errno_status(errno, fmt::format("writing trace {}", output));
        break;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
  };
  std::vector<std::thread> serializing = start_round(0, sets[0]);
  for (size_t round = 0; round < rounds; ++round) {
    for (std::thread& s : serializing) s.join();
    const std::vector<WireBuffer>& ready = sets[round % 2];
    serializing = round + 1 < rounds && status.ok() ? start_round(round + 1, sets[(round + 1) % 2])
                                                    : std::vector<std::thread>();
    for (const WireBuffer& buffer : ready) write_all(buffer);
  }
  for (std::thread& s : serializing) s.join();
  if (output != "-" && ::close(fd) != 0 && status.ok()) {
    status = errno_status(errno, fmt::format("closing trace {}", output));
  }
  return status;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Inputs {
  const std::vector<std::string>& names;
  std::vector<std::unique_ptr<MappedFile>> files;
  std::vector<Piece> pieces;
  uint64_t total_bytes = 0;
  unsigned threads = 1;
};

// Feeds a parsed piece to `builder`, its ops into `ops` (nullptr: the builder's own store).
Status resolve(const Inputs& in, const Piece& piece, ParsedLog& log, NcclTraceBuilder& builder,
               OpSink* ops) {
  if (piece.begin == 0) builder.start_file(in.names[piece.file]);
  COLLIDE_RETURN_IF_ERROR(builder.add(log, ops));
  if (piece.last_of_file) COLLIDE_RETURN_IF_ERROR(builder.end_file());
  return {};
}

// The end of a stored import: groups the communicators, then writes the header and every op,
// serialized on all threads.
Result<ImportReport> finish_stored(const Inputs& in, NcclTraceBuilder& builder,
                                   const std::string& output,
                                   std::chrono::steady_clock::time_point started) {
  const double parse_seconds = seconds_since(started);
  const auto finishing = std::chrono::steady_clock::now();
  COLLIDE_RETURN_IF_ERROR(builder.finish());
  COLLIDE_RETURN_IF_ERROR(builder.check_has_ops());
  COLLIDE_RETURN_IF_ERROR(write_trace(builder, output, in.threads));
  logging::get("traces")->debug(
      "nccl import: {} MB in {} pieces on {} threads; parse and resolve {:.2f} s, group and "
      "write {} ops {:.2f} s",
      in.total_bytes / 1000000, in.pieces.size(), in.threads, parse_seconds, builder.ops(),
      seconds_since(finishing));
  return std::move(builder.report());
}

// One pass that keeps every op (packed) until the end, then writes the trace, serialized on all
// threads in batches: the usual way, and the one for strict mode (nothing is written when the
// input has a problem), stdout, and when streaming could not be used.
Result<ImportReport> import_stored(Inputs& in, const std::string& output,
                                   const ImportOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  NcclTraceBuilder builder(options);
  uint64_t done_bytes = 0;
  Pipeline::Stages stages;
  stages.resolve = [&](const Piece& piece, Work& w) -> Status {
    COLLIDE_RETURN_IF_ERROR(resolve(in, piece, w.log, builder, nullptr));
    done_bytes += piece.end - piece.begin;
    if (options.progress) options.progress(done_bytes, in.total_bytes);
    return {};
  };
  COLLIDE_RETURN_IF_ERROR(Pipeline(in.files, in.pieces, in.threads).run(stages));
  return finish_stored(in, builder, output, started);
}

// One pass that writes early. A job usually creates its communicators before its collectives, so
// its init lines come first: once kSettledPieces pieces in a row bring no init, graph or version
// line, the layout those gave is taken as final. The header is written, the ops so far are
// serialized, and every op after is written in its final form as it is resolved, which leaves
// nothing to group and write at the end (and no ops to keep). Such a line after that (a
// communicator created late) may change the layout: the pass stops and returns false, and the
// caller starts over another way. Also false if the end finds another layout after all.
Result<bool> import_settled(Inputs& in, const std::string& output, const ImportOptions& options,
                            ImportReport& report) {
  const auto started = std::chrono::steady_clock::now();
  NcclTraceBuilder builder(options);
  ImportOptions quiet = options;  // `builder` reports the problems
  quiet.progress = nullptr;
  NcclTraceBuilder layout(quiet);  // fed the same records but the collectives
  FinalOps final_ops(layout);
  std::unique_ptr<OutputFile> out;
  size_t settled = 0;  // pieces in a row without an init, graph or version line
  bool writing = false;
  bool unsettled = false;
  uint64_t done_bytes = 0;
  Pipeline::Stages stages;
  stages.resolve = [&](const Piece& piece, Work& w) -> Status {
    // (TUNING lines come with the collectives, but once a size was seen its choice is known.)
    const bool layout_lines = !w.log.inits.empty() || !w.log.graphs.empty() ||
                              !w.log.versions.empty() || layout.extends_tuning(w.log);
    if (writing) {
      if (layout_lines) {
        unsettled = true;
        return {StatusCode::kFailedPrecondition, "the layout changed after it was written"};
      }
      final_ops.write_to(w.wire);
      COLLIDE_RETURN_IF_ERROR(resolve(in, piece, w.log, builder, &final_ops));
      COLLIDE_RETURN_IF_ERROR(out->write(w.wire.data(), w.wire.size()));
    } else {
      COLLIDE_RETURN_IF_ERROR(resolve(in, piece, w.log, builder, nullptr));
      w.log.colls.clear();
      COLLIDE_RETURN_IF_ERROR(resolve(in, piece, w.log, layout, nullptr));
      settled = layout_lines ? 0 : settled + 1;
      if (settled >= kSettledPieces && builder.ops() > 0 && !piece.last_of_file) {
        COLLIDE_RETURN_IF_ERROR(layout.finish());
        COLLIDE_RETURN_IF_ERROR(start_trace(output, layout.header()));
        auto opened = OutputFile::open_for_append(output);
        if (!opened.ok()) return opened.status();
        out = std::move(*opened);
        w.wire.clear();
        layout.serialize_ops(builder.stored_ops(), w.wire);
        COLLIDE_RETURN_IF_ERROR(out->write(w.wire.data(), w.wire.size()));
        writing = true;
      }
    }
    done_bytes += piece.end - piece.begin;
    if (options.progress) options.progress(done_bytes, in.total_bytes);
    return {};
  };
  const Status status = Pipeline(in.files, in.pieces, in.threads).run(stages);
  if (unsettled) {
    logging::get("traces")->debug("nccl import: init lines after the layout was written; again");
    return false;
  }
  COLLIDE_RETURN_IF_ERROR(status);
  if (!writing) {
    auto stored = finish_stored(in, builder, output, started);
    if (!stored.ok()) return stored.status();
    report = std::move(*stored);
    return true;
  }
  COLLIDE_RETURN_IF_ERROR(out->close());
  COLLIDE_RETURN_IF_ERROR(builder.finish());
  const bool same = final_ops.complete() && builder.same_layout(layout) &&
                    !builder.needs_stored_pass();
  logging::get("traces")->debug(
      "nccl import: {} MB in {} pieces on {} threads, written as resolved: {:.2f} s ({} ops){}",
      in.total_bytes / 1000000, in.pieces.size(), in.threads, seconds_since(started),
      builder.report().ops, same ? "" : "; the layouts differ, again");
  if (same) report = std::move(builder.report());
  return same;
}

// Two passes that never hold more than a few pieces' ops. The first reads only init, graph and
// version lines, which decide the ranks and communicators (the header, and how each op is
// written); the second resolves the collectives in order and writes each op in its final form as
// it goes (while the workers parse the pieces ahead). The header and the ops' layout are checked
// against what the second pass saw: returns false (the caller starts over another way) if they
// differ.
Result<bool> import_streaming(Inputs& in, const std::string& output, const ImportOptions& options,
                              const std::function<void(ParsedLog&)>& alter_first_pass,
                              ImportReport& report) {
  const auto started = std::chrono::steady_clock::now();
  ImportOptions quiet = options;  // the second pass reports the problems
  quiet.progress = nullptr;
  NcclTraceBuilder layout(quiet);
  Pipeline pipeline(in.files, in.pieces, in.threads);
  Pipeline::Stages first;
  first.skip_collectives = true;
  first.resolve = [&](const Piece& piece, Work& w) -> Status {
    w.log.colls.clear();  // the few the parser still gave (e.g. of lines with several messages)
    if (alter_first_pass) alter_first_pass(w.log);
    return resolve(in, piece, w.log, layout, nullptr);
  };
  COLLIDE_RETURN_IF_ERROR(pipeline.run(first));
  COLLIDE_RETURN_IF_ERROR(layout.finish());
  const double first_seconds = seconds_since(started);

  const auto streaming = std::chrono::steady_clock::now();
  COLLIDE_RETURN_IF_ERROR(start_trace(output, layout.header()));
  auto out = OutputFile::open_for_append(output);
  if (!out.ok()) return out.status();
  NcclTraceBuilder builder(options);
  FinalOps final_ops(layout);
  uint64_t done_bytes = 0;
  Pipeline::Stages second;
  second.resolve = [&](const Piece& piece, Work& w) -> Status {
    final_ops.write_to(w.wire);
    COLLIDE_RETURN_IF_ERROR(resolve(in, piece, w.log, builder, &final_ops));
    COLLIDE_RETURN_IF_ERROR((*out)->write(w.wire.data(), w.wire.size()));
    done_bytes += piece.end - piece.begin;
    if (options.progress) options.progress(done_bytes, in.total_bytes);
    return {};
  };
  COLLIDE_RETURN_IF_ERROR(pipeline.run(second));
  COLLIDE_RETURN_IF_ERROR((*out)->close());
  COLLIDE_RETURN_IF_ERROR(builder.finish());
  if (Status none = builder.check_has_ops(); !none.ok()) {
    ::unlink(output.c_str());  // the header written up front: bad input leaves nothing behind
    return none;
  }
  const bool same = final_ops.complete() && builder.same_layout(layout) &&
                    !builder.needs_stored_pass();
  logging::get("traces")->debug(
      "nccl import: {} MB in {} pieces on {} threads; init lines {:.2f} s, collectives streamed "
      "{:.2f} s ({} ops){}",
      in.total_bytes / 1000000, in.pieces.size(), in.threads, first_seconds,
      seconds_since(streaming), builder.report().ops,
      same ? "" : "; the layouts differ, written again");
  if (same) report = std::move(builder.report());
  return same;
}

Result<ImportReport> import(const std::vector<std::string>& inputs, const std::string& output,
                            const ImportOptions& options, uint64_t stream_above_bytes,
                            const std::function<void(ParsedLog&)>& alter_first_pass = nullptr) {
  if (inputs.empty()) return invalid_argument("no NCCL log files given");
  Inputs in{inputs, {}, {}, 0, 1};
  for (const std::string& path : inputs) {
    auto file = MappedFile::open(path);
    if (!file.ok()) return file.status();
    in.total_bytes += (*file)->size();
    cut(**file, in.files.size(), in.pieces);
    in.files.push_back(std::move(*file));
  }
  in.threads = std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8);
  // Strict mode writes nothing when the input has a problem, and stdout cannot start over.
  const bool may_start_over = !options.strict && output != "-";
  if (in.total_bytes > stream_above_bytes && may_start_over) {
    ImportReport report;
    auto streamed = import_streaming(in, output, options, alter_first_pass, report);
    if (!streamed.ok()) return streamed.status();
    if (*streamed) return report;
  } else if (may_start_over && in.files.size() == 1) {
    // (Logs of one process each bring their init lines file after file.)
    ImportReport report;
    auto settled = import_settled(in, output, options, report);
    if (!settled.ok()) return settled.status();
    if (*settled) return report;
  }
  return import_stored(in, output, options);
}

}  // namespace

Result<ImportReport> import_nccl_logs(const std::vector<std::string>& inputs,
                                      const std::string& output, const ImportOptions& options) {
  return import(inputs, output, options, kStreamAboveBytes);
}

Result<ImportReport> import_nccl_logs_streamed(
    const std::vector<std::string>& inputs, const std::string& output, const ImportOptions& options,
    const std::function<void(ParsedLog&)>& alter_first_pass) {
  return import(inputs, output, options, 0, alter_first_pass);
}

}  // namespace collide::traces::nccl
