#include "traces/nccl/nccl_import.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
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
constexpr size_t kMaxPiecesAhead = 6;  // bounds the memory of parsed-but-unresolved pieces
constexpr size_t kBatch = 1 << 15;     // ops serialized by one thread at a time

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
  ParsedLog log;
  bool ready = false;
};

// Piece boundaries of one file, each at a line start.
void cut(const MappedFile& f, size_t file_index, std::vector<std::unique_ptr<Piece>>& pieces) {
  size_t begin = 0;
  const size_t first = pieces.size();
  while (begin < f.size()) {
    size_t end = std::min(f.size(), begin + kPieceBytes);
    if (end < f.size()) {
      const void* nl = std::memchr(f.data() + end, '\n', f.size() - end);
      end = nl == nullptr ? f.size()
                          : static_cast<size_t>(static_cast<const char*>(nl) - f.data()) + 1;
    }
    auto piece = std::make_unique<Piece>();
    piece->file = file_index;
    piece->begin = begin;
    piece->end = end;
    pieces.push_back(std::move(piece));
    begin = end;
  }
  if (pieces.size() == first) {  // an empty file still gets its (empty) piece
    auto piece = std::make_unique<Piece>();
    piece->file = file_index;
    pieces.push_back(std::move(piece));
  }
  pieces.back()->last_of_file = true;
}

// Writes the header through TraceWriter, then the ops, serialized on all threads in batches and
// appended in order (the trace file's delimited format, as TraceWriter writes it).
Status write_trace(const NcclTraceBuilder& builder, const std::string& output, unsigned threads) {
  {
    auto writer = TraceWriter::create(output, builder.header());
    if (!writer.ok()) return writer.status();
    COLLIDE_RETURN_IF_ERROR((*writer)->close());
  }
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
    serializing = round + 1 < rounds && status.ok()
                      ? start_round(round + 1, sets[(round + 1) % 2])
                      : std::vector<std::thread>();
    for (const WireBuffer& buffer : ready) write_all(buffer);
  }
  for (std::thread& s : serializing) s.join();
  if (output != "-" && ::close(fd) != 0 && status.ok()) {
    status = errno_status(errno, fmt::format("closing trace {}", output));
  }
  return status;
}

}  // namespace

Result<ImportReport> import_nccl_logs(const std::vector<std::string>& inputs,
                                      const std::string& output, const ImportOptions& options) {
  if (inputs.empty()) return invalid_argument("no NCCL log files given");
  std::vector<std::unique_ptr<MappedFile>> files;
  std::vector<std::unique_ptr<Piece>> pieces;
  uint64_t total_bytes = 0;
  for (const std::string& path : inputs) {
    auto file = MappedFile::open(path);
    if (!file.ok()) return file.status();
    total_bytes += (*file)->size();
    cut(**file, files.size(), pieces);
    files.push_back(std::move(*file));
  }

  // Workers parse pieces ahead of the resolver, at most kMaxPiecesAhead of them.
  std::mutex mu;
  std::condition_variable cv;
  size_t next_piece = 0;
  size_t resolved = 0;
  bool stop = false;
  std::vector<ParsedLog> spare;
  auto work = [&] {
    while (true) {
      size_t i;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] {
          return stop || next_piece >= pieces.size() || next_piece < resolved + kMaxPiecesAhead;
        });
        if (stop || next_piece >= pieces.size()) return;
        i = next_piece++;
      }
      Piece& piece = *pieces[i];
      {
        // Reuse the vectors of a resolved piece: fresh ones would fault in new pages each time.
        std::lock_guard lock(mu);
        if (!spare.empty()) {
          piece.log = std::move(spare.back());
          spare.pop_back();
        }
      }
      const MappedFile& f = *files[piece.file];
      if (f.data() != nullptr) {
        parse_log_piece(f.data(), f.data() + f.size(), f.data() + piece.begin, f.data() + piece.end,
                        piece.log);
      }
      {
        std::lock_guard lock(mu);
        piece.ready = true;
      }
      cv.notify_all();
    }
  };
  const unsigned threads = std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < std::min<size_t>(threads, pieces.size()); ++t)
    workers.emplace_back(work);
  auto stop_workers = [&] {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    cv.notify_all();
    for (std::thread& t : workers) t.join();
    workers.clear();
  };

  const auto started = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  NcclTraceBuilder builder(options);
  builder.reserve_ops(total_bytes /
                      150);  // COLL lines are rarely shorter; untouched pages cost nothing
  uint64_t done_bytes = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return pieces[i]->ready; });
    }
    Piece& piece = *pieces[i];
    if (piece.begin == 0) builder.start_file(inputs[piece.file]);
    Status status = builder.add(piece.log);
    if (status.ok() && piece.last_of_file) status = builder.end_file();
    if (!status.ok()) {
      stop_workers();
      return status;
    }
    ParsedLog used = std::move(piece.log);
    used.processes.clear();
    used.colls.clear();
    used.inits.clear();
    used.graphs.clear();
    used.versions.clear();
    used.problems.clear();
    used.lines = used.nccl_lines = 0;
    files[piece.file]->release(piece.begin, piece.end);
    done_bytes += piece.end - piece.begin;
    if (options.progress) options.progress(done_bytes, total_bytes);
    {
      std::lock_guard lock(mu);
      resolved = i + 1;
      spare.push_back(std::move(used));
    }
    cv.notify_all();
  }
  stop_workers();
  files.clear();

  const double parse_seconds = seconds_since(started);
  const auto finishing = std::chrono::steady_clock::now();
  COLLIDE_RETURN_IF_ERROR(builder.finish());
  COLLIDE_RETURN_IF_ERROR(write_trace(builder, output, threads));
  logging::get("traces")->debug(
      "nccl import: {} MB in {} pieces on {} threads; parse and resolve {:.2f} s, group and "
      "write {} ops {:.2f} s",
      total_bytes / 1000000, pieces.size(), threads, parse_seconds, builder.ops(),
      seconds_since(finishing));
  return std::move(builder.report());
}

}  // namespace collide::traces::nccl
