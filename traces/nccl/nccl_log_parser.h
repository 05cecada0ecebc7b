#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collide/trace.pb.h"

// Parses the text of an NCCL (or RCCL) debug log into records, without resolving ranks or
// communicators (nccl_trace_builder does that). A piece of a log is parsed on its own, so big
// files are parsed in parallel pieces; records keep the piece's line numbers (from 1) and a
// sequence number that orders them within the piece.
//
// What is read (FACTS.md section 2): lines holding `NCCL INFO` (or `NCCL WARN`) anywhere, with the
// `host:pid:tid [dev]` prefix right before it and any launcher text before that; a leading
// timestamp (`YYYY-MM-DD HH:MM:SS[.frac]`, with `T` or a space, optionally in brackets and with a
// trailing `Z`) is kept. Several `NCCL INFO` on one physical line (interleaved writers) are parsed
// as separate messages. A collective line cut before its `stream` and continued on the next line
// (which holds no `NCCL `) is joined with it. Lines without `NCCL ` are application output and are
// not problems; NCCL messages of a known shape that do not parse are.
namespace collide::traces::nccl {

// (host, pid) of a process, as the piece saw it; records refer to it by index.
struct ProcessRef {
  std::string_view host;  // points into the parsed text
  uint32_t pid = 0;
  int32_t device = -1;  // the `[dev]` of its first line the piece parsed in full
};

struct CollRecord {
  uint64_t seq = 0;
  uint64_t line = 0;
  uint64_t op_count = 0;
  uint64_t count = 0;
  uint64_t comm = 0;  // the comm pointer
  uint64_t time_ns = 0;
  uint32_t process = 0;  // index into ParsedLog::processes
  int32_t root = -1;
  int32_t red_op = 0;
  int32_t nranks = -1;  // nranks= when printed
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  v1::DataType datatype = v1::DATA_TYPE_UNSPECIFIED;
  bool has_time = false;
  bool send_buffer_null = false;  // sendbuff (nil): tells the two Send conventions apart
};

enum class InitStage : uint8_t {
  kInfo,      // 2.20+ `comm <p> rank <r> nRanks <n> nNodes ...`, or `Init START`
  kComplete,  // `... - Init COMPLETE`
};

struct InitRecord {
  uint64_t seq = 0;
  uint64_t line = 0;
  uint64_t comm = 0;
  uint64_t parent = 0;  // ncclCommSplit's parent comm pointer, 0 otherwise
  int64_t color = 0;
  int64_t key = 0;
  uint32_t process = 0;
  int32_t rank = -1;
  int32_t nranks = -1;
  int32_t cuda_dev = -1;  // from `cudaDev`, else the prefix's [dev]
  int32_t prefix_dev = -1;
  InitStage stage = InitStage::kComplete;
  bool split = false;
  std::string comm_id;  // `commId 0x...` when printed (2.16+), else empty
};

enum class GraphKind : uint8_t {
  kRingOrder,       // `Channel 00/02 :    0   1   2   3` (printed by comm rank 0)
  kRingNeighbours,  // `Ring 00 : 3 -> 0 -> 1`
  kTree,            // one channel of `Trees [0] 1/-1/-1->0->-1 ...`
  kNics,            // `NET/IB : Using [0]mlx5_0:1/RoCE ...`, `NET/Socket : Using [0]eth0:...`
};

struct GraphRecord {
  uint64_t seq = 0;
  uint64_t line = 0;
  uint32_t process = 0;
  int32_t prefix_dev = -1;
  GraphKind kind = GraphKind::kRingOrder;
  uint32_t channel = 0;
  bool truncated = false;       // ring order cut with `...`
  std::vector<int32_t> values;  // ring: ranks; neighbours: prev, me, next; tree: me, up, down...
  std::vector<std::string> nics;
};

struct VersionRecord {
  uint64_t seq = 0;
  uint64_t line = 0;
  std::string version;  // as printed, e.g. "2.18.3+cuda12.1"
};

// NCCL_DEBUG_SUBSYS=TUNING's choices (`AllReduce: 4 Bytes -> Algo TREE proto LL ...`; before 2.24
// the algorithm and protocol are numbers), gathered per (collective, algorithm, protocol) over the
// sizes they were chosen for: a piece holds a few of these however many TUNING lines it has.
struct TuningRecord {
  v1::OpKind kind = v1::OP_KIND_UNSPECIFIED;
  std::string algo;   // NCCL's name: TREE, RING, COLLNET_DIRECT, ..., or as printed
  std::string proto;  // LL, LL128, SIMPLE, or as printed
  uint64_t min_bytes = UINT64_MAX;
  uint64_t max_bytes = 0;
  uint64_t lines = 0;
};

// Lines of a kind the importer does not read (NCCL INFO messages of other subsystems, NCCL WARN,
// RCCL's `##` kernel-trace lines, lines without an NCCL message): counted by kind, so the import
// can say what it left out; not problems.
struct UnreadKind {
  std::string kind;
  uint64_t lines = 0;
  uint64_t first_line = 0;  // of the piece
  std::string example;      // the start of the first such line
};

struct ParseProblem {
  uint64_t seq = 0;
  uint64_t line = 0;
  std::string what;
};

struct ParsedLog {
  std::vector<ProcessRef> processes;
  std::vector<CollRecord> colls;
  std::vector<InitRecord> inits;
  std::vector<GraphRecord> graphs;
  std::vector<VersionRecord> versions;
  std::vector<ParseProblem> problems;
  std::vector<TuningRecord> tunings;
  std::vector<UnreadKind> unread;  // at most kMaxUnreadKinds, the last one then "other"
  uint64_t lines = 0;       // physical lines in the piece
  uint64_t nccl_lines = 0;  // lines holding an NCCL message
};

// Kinds of unread lines a piece (and an import) tells apart; beyond them, one more counts the rest.
inline constexpr size_t kMaxUnreadKinds = 24;

// Parses the lines starting in [begin, end) of the text [text_begin, text_end). A piece looks at
// the lines around it: a collective cut short on its last line is joined with the next line (in the
// next piece), and a first line that the previous piece joined that way is skipped. `begin` and
// `end` must be at line starts (or the text's end); the last line may lack its newline.
// `skip_collectives` leaves out collective lines (neither records nor problems of them), for a
// first pass that only needs the init, graph and version lines.
void parse_log_piece(const char* text_begin, const char* text_end, const char* begin,
                     const char* end, ParsedLog& out, bool skip_collectives = false);

// The whole of `text` as one piece.
ParsedLog parse_log_text(std::string_view text);

// Parses a leading date and time (see above) into ns since the Unix epoch, UTC; false if `text`
// does not start with one. `consumed` is how many bytes it took.
bool parse_timestamp(std::string_view text, uint64_t& ns, size_t& consumed);

}  // namespace collide::traces::nccl
