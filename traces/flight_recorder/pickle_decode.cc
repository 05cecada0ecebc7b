#include "traces/flight_recorder/pickle_decode.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

namespace collide::traces::flight_recorder {
namespace {

// Opcodes of the pickle format (Python's Lib/pickletools.py documents each one).
enum Opcode : uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinFloat = 'G',
  kBinString = 'T',
  kShortBinString = 'U',
  kBinUnicode = 'X',
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kAppend = 'a',
  kAppends = 'e',
  kDict = 'd',
  kEmptyDict = '}',
  kList = 'l',
  kEmptyList = ']',
  kTuple = 't',
  kEmptyTuple = ')',
  kSetItem = 's',
  kSetItems = 'u',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kEmptySet = 0x8f,
  kAddItems = 0x90,
  kFrozenSet = 0x91,
  kMemoize = 0x94,
  kFrame = 0x95,
  kByteArray8 = 0x96,
};

// Opcodes that import names, call callables, build objects or reach outside the stream. Each is
// refused: a data reader has no business running them.
const char* code_running_opcode(uint8_t op) {
  switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
  }
}

struct Node {
  enum class Type : uint8_t { kNone, kBool, kInt, kUInt, kFloat, kStr, kBytes, kList, kTuple,
                              kDict, kSet };
  Type type = Type::kNone;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  double real = 0;
  std::string text;  // str, or the bytes of bytes
  std::vector<Node*> items;                       // list, tuple, set
  std::vector<std::pair<Node*, Node*>> entries;   // dict, in insertion order
};

const char* type_name(Node::Type type) {
  switch (type) {
    case Node::Type::kNone: return "None";
    case Node::Type::kBool: return "bool";
    case Node::Type::kInt:
    case Node::Type::kUInt: return "int";
    case Node::Type::kFloat: return "float";
    case Node::Type::kStr: return "str";
    case Node::Type::kBytes: return "bytes";
    case Node::Type::kList: return "list";
    case Node::Type::kTuple: return "tuple";
    case Node::Type::kDict: return "dict";
    case Node::Type::kSet: return "set";
  }
  return "?";
}

class Decoder {
 public:
  Decoder(std::string_view bytes, std::string_view file, const PickleLimits& limits)
      : bytes_(bytes), file_(file), limits_(limits) {
    limits_.max_values = std::min<uint64_t>(
        limits_.max_values, std::max<uint64_t>(1u << 16, 16 * static_cast<uint64_t>(bytes.size())));
  }

  Result<nlohmann::json> run() {
    auto root = decode();
    if (!root.ok()) return root.status();
    uint64_t values = 0;
    return to_json(*root, 0, values);
  }

 private:
  Status error(std::string what) const {
    return invalid_argument(fmt::format("{}: pickle byte {}: {}", file_, op_offset_, what));
  }

  Node* make(Node::Type type) {
    Node& node = nodes_.emplace_back();
    node.type = type;
    return &node;
  }

  bool need(uint64_t n) const { return n <= bytes_.size() - pos_; }

  // Little-endian unsigned integer of `n` bytes (n <= 8); the caller checked need(n).
  uint64_t read_le(size_t n) {
    uint64_t value = 0;
    for (size_t i = 0; i < n; ++i) {
      value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += n;
    return value;
  }

  Result<uint64_t> read_length(size_t width) {
    if (!need(width)) return error("truncated length");
    const uint64_t n = read_le(width);
    if (!need(n)) {
      return error(fmt::format("length {} runs past the end of the data ({} bytes left)", n,
                               bytes_.size() - pos_));
    }
    return n;
  }

  Result<Node*> pop() {
    if (stack_.empty()) return error("stack underflow");
    if (!marks_.empty() && marks_.back() >= stack_.size()) return error("pop across a MARK");
    Node* top = stack_.back();
    stack_.pop_back();
    return top;
  }

  // The items pushed since the last MARK, which is removed.
  Result<std::vector<Node*>> pop_to_mark() {
    if (marks_.empty()) return error("no MARK before an opcode that needs one");
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<Node*> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }

  Status add_pairs(Node* dict, const std::vector<Node*>& items) {
    if (dict->type != Node::Type::kDict) {
      return error(fmt::format("setting items on a {}, not a dict", type_name(dict->type)));
    }
    if (items.size() % 2 != 0) return error("odd number of items for a dict");
    for (size_t i = 0; i < items.size(); i += 2) dict->entries.emplace_back(items[i], items[i + 1]);
    return Status::ok_status();
  }

  Status push_integer_bytes(std::string_view raw) {
    // Two's complement, little-endian, any width; only what fits 64 bits is accepted.
    Node* node = make(Node::Type::kInt);
    if (raw.empty()) {
      stack_.push_back(node);
      return Status::ok_status();
    }
    const bool negative = (static_cast<uint8_t>(raw.back()) & 0x80) != 0;
    for (size_t i = 8; i < raw.size(); ++i) {
      if (static_cast<uint8_t>(raw[i]) != (negative ? 0xff : 0x00)) {
        return error(fmt::format("integer of {} bytes does not fit 64 bits", raw.size()));
      }
    }
    uint64_t value = negative ? ~0ull : 0;
    const size_t low = std::min<size_t>(raw.size(), 8);
    for (size_t i = 0; i < low; ++i) {
      value &= ~(0xffull << (8 * i));
      value |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
    }
    const bool top_bit = (value >> 63) != 0;
    if (negative && !top_bit) return error("negative integer does not fit 64 bits");
    if (!negative && top_bit) {
      node->type = Node::Type::kUInt;
      node->unsigned_integer = value;
    } else {
      node->integer = static_cast<int64_t>(value);
    }
    stack_.push_back(node);
    return Status::ok_status();
  }

  // Python numbers memo entries 0, 1, 2, ...: those below the input's length (each store takes
  // an opcode, so a dense memo never passes it) sit in a vector, any others in a map.
  void memo_store(uint64_t index, Node* node) {
    if (index < bytes_.size()) {
      if (index >= memo_dense_.size()) memo_dense_.resize(index + 1, nullptr);
      if (memo_dense_[index] == nullptr) ++memo_count_;
      memo_dense_[index] = node;
    } else {
      memo_count_ += memo_sparse_.count(index) == 0 ? 1 : 0;
      memo_sparse_[index] = node;
    }
  }

  Node* memo_load(uint64_t index) const {
    if (index < memo_dense_.size()) return memo_dense_[index];
    const auto it = memo_sparse_.find(index);
    return it == memo_sparse_.end() ? nullptr : it->second;
  }

  Result<Node*> decode() {
    while (pos_ < bytes_.size()) {
      op_offset_ = pos_;
      const uint8_t op = static_cast<uint8_t>(bytes_[pos_++]);
      if (const char* name = code_running_opcode(op)) {
        return error(fmt::format(
            "opcode {} (0x{:02x}) would import or call Python code; only plain data "
            "(dict, list, tuple, str, bytes, int, float, bool, None) is read",
            name, op));
      }
      switch (op) {
        case kProto: {
          if (!need(1)) return error("truncated PROTO");
          const uint64_t version = read_le(1);
          if (version < 2 || version > 5) {
            return error(fmt::format("pickle protocol {} is not supported (2 to 5 are)", version));
          }
          break;
        }
        case kFrame: {
          auto n = read_length(8);  // frames only group opcodes; their bounds carry no meaning
          if (!n.ok()) return n.status();
          break;
        }
        case kStop: {
          if (stack_.empty()) return error("STOP with nothing decoded");
          return stack_.back();
        }
        case kMark:
          marks_.push_back(stack_.size());
          break;
        case kPop: {
          if (!marks_.empty() && marks_.back() == stack_.size()) {
            marks_.pop_back();  // the top of the stack is a MARK
          } else if (!stack_.empty()) {
            stack_.pop_back();
          } else {
            return error("POP on an empty stack");
          }
          break;
        }
        case kPopMark: {
          auto items = pop_to_mark();
          if (!items.ok()) return items.status();
          break;
        }
        case kDup: {
          if (stack_.empty()) return error("DUP on an empty stack");
          stack_.push_back(stack_.back());
          break;
        }
        case kNone:
          stack_.push_back(make(Node::Type::kNone));
          break;
        case kNewTrue:
        case kNewFalse: {
          Node* node = make(Node::Type::kBool);
          node->boolean = op == kNewTrue;
          stack_.push_back(node);
          break;
        }
        case kBinInt: {
          if (!need(4)) return error("truncated BININT");
          Node* node = make(Node::Type::kInt);
          node->integer = static_cast<int32_t>(static_cast<uint32_t>(read_le(4)));
          stack_.push_back(node);
          break;
        }
        case kBinInt1:
        case kBinInt2: {
          const size_t width = op == kBinInt1 ? 1 : 2;
          if (!need(width)) return error("truncated BININT1/BININT2");
          Node* node = make(Node::Type::kInt);
          node->integer = static_cast<int64_t>(read_le(width));
          stack_.push_back(node);
          break;
        }
        case kLong1:
        case kLong4: {
          auto n = read_length(op == kLong1 ? 1 : 4);
          if (!n.ok()) return n.status();
          const std::string_view raw = bytes_.substr(pos_, *n);
          pos_ += *n;
          COLLIDE_RETURN_IF_ERROR(push_integer_bytes(raw));
          break;
        }
        case kBinFloat: {
          if (!need(8)) return error("truncated BINFLOAT");
          uint64_t bits = 0;  // big-endian IEEE 754 double
          for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<uint8_t>(bytes_[pos_ + i]);
          pos_ += 8;
          Node* node = make(Node::Type::kFloat);
          std::memcpy(&node->real, &bits, sizeof bits);
          stack_.push_back(node);
          break;
        }
        case kShortBinUnicode:
        case kBinUnicode:
        case kBinUnicode8:
        case kShortBinString:
        case kBinString:
        case kShortBinBytes:
        case kBinBytes:
        case kBinBytes8:
        case kByteArray8: {
          size_t width = 4;
          if (op == kShortBinUnicode || op == kShortBinString || op == kShortBinBytes) width = 1;
          if (op == kBinUnicode8 || op == kBinBytes8 || op == kByteArray8) width = 8;
          auto n = read_length(width);
          if (!n.ok()) return n.status();
          const bool is_bytes = op == kShortBinBytes || op == kBinBytes || op == kBinBytes8 ||
                                op == kByteArray8;
          Node* node = make(is_bytes ? Node::Type::kBytes : Node::Type::kStr);
          node->text.assign(bytes_.substr(pos_, *n));
          pos_ += *n;
          stack_.push_back(node);
          break;
        }
        case kEmptyDict:
          stack_.push_back(make(Node::Type::kDict));
          break;
        case kEmptyList:
          stack_.push_back(make(Node::Type::kList));
          break;
        case kEmptyTuple:
          stack_.push_back(make(Node::Type::kTuple));
          break;
        case kEmptySet:
          stack_.push_back(make(Node::Type::kSet));
          break;
        case kDict: {
          auto items = pop_to_mark();
          if (!items.ok()) return items.status();
          Node* dict = make(Node::Type::kDict);
          COLLIDE_RETURN_IF_ERROR(add_pairs(dict, *items));
          stack_.push_back(dict);
          break;
        }
        case kList:
        case kTuple:
        case kFrozenSet: {
          auto items = pop_to_mark();
          if (!items.ok()) return items.status();
          Node* node = make(op == kList    ? Node::Type::kList
                            : op == kTuple ? Node::Type::kTuple
                                           : Node::Type::kSet);
          node->items = std::move(*items);
          stack_.push_back(node);
          break;
        }
        case kTuple1:
        case kTuple2:
        case kTuple3: {
          const size_t n = op - kTuple1 + 1;
          if (stack_.size() < n) return error("stack underflow building a tuple");
          if (!marks_.empty() && marks_.back() > stack_.size() - n) {
            return error("tuple would take items across a MARK");
          }
          Node* node = make(Node::Type::kTuple);
          node->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
          stack_.resize(stack_.size() - n);
          stack_.push_back(node);
          break;
        }
        case kAppend: {
          auto value = pop();
          if (!value.ok()) return value.status();
          if (stack_.empty() || stack_.back()->type != Node::Type::kList) {
            return error("APPEND to something that is not a list");
          }
          stack_.back()->items.push_back(*value);
          break;
        }
        case kAppends:
        case kAddItems: {
          auto items = pop_to_mark();
          if (!items.ok()) return items.status();
          const Node::Type want = op == kAppends ? Node::Type::kList : Node::Type::kSet;
          if (stack_.empty() || stack_.back()->type != want) {
            return error(op == kAppends ? "APPENDS to something that is not a list"
                                        : "ADDITEMS to something that is not a set");
          }
          auto& to = stack_.back()->items;
          to.insert(to.end(), items->begin(), items->end());
          break;
        }
        case kSetItem:
        case kSetItems: {
          std::vector<Node*> items;
          if (op == kSetItem) {
            if (stack_.size() < 3) return error("stack underflow in SETITEM");
            if (!marks_.empty() && marks_.back() > stack_.size() - 2) {
              return error("SETITEM would take items across a MARK");
            }
            items.assign(stack_.end() - 2, stack_.end());
            stack_.resize(stack_.size() - 2);
          } else {
            auto popped = pop_to_mark();
            if (!popped.ok()) return popped.status();
            items = std::move(*popped);
          }
          if (stack_.empty()) return error("no dict to set items on");
          COLLIDE_RETURN_IF_ERROR(add_pairs(stack_.back(), items));
          break;
        }
        case kBinPut:
        case kLongBinPut:
        case kMemoize: {
          uint64_t index = memo_count_;
          if (op != kMemoize) {
            const size_t width = op == kBinPut ? 1 : 4;
            if (!need(width)) return error("truncated BINPUT/LONG_BINPUT");
            index = read_le(width);
          }
          if (stack_.empty()) return error("memo store with an empty stack");
          memo_store(index, stack_.back());
          break;
        }
        case kBinGet:
        case kLongBinGet: {
          const size_t width = op == kBinGet ? 1 : 4;
          if (!need(width)) return error("truncated BINGET/LONG_BINGET");
          const uint64_t index = read_le(width);
          Node* stored = memo_load(index);
          if (stored == nullptr) return error(fmt::format("memo entry {} was never stored", index));
          stack_.push_back(stored);
          break;
        }
        default:
          return error(fmt::format("opcode 0x{:02x} is not one this reader accepts (it reads "
                                   "protocol 2 to 5 data opcodes only)",
                                   op));
      }
    }
    op_offset_ = pos_;
    return error("the data ends before STOP (truncated file?)");
  }

  Result<nlohmann::json> to_json(const Node* node, uint32_t depth, uint64_t& values) const {
    if (++values > limits_.max_values) {
      return invalid_argument(fmt::format(
          "{}: pickle expands to more than {} values (shared parts referred to many times)",
          file_, limits_.max_values));
    }
    if (depth > limits_.max_depth) {
      return invalid_argument(fmt::format(
          "{}: pickle nests containers deeper than {} (or a container holds itself)", file_,
          limits_.max_depth));
    }
    switch (node->type) {
      case Node::Type::kNone: return nlohmann::json(nullptr);
      case Node::Type::kBool: return nlohmann::json(node->boolean);
      case Node::Type::kInt: return nlohmann::json(node->integer);
      case Node::Type::kUInt: return nlohmann::json(node->unsigned_integer);
      case Node::Type::kFloat: return nlohmann::json(node->real);
      case Node::Type::kStr: return nlohmann::json(node->text);
      case Node::Type::kBytes:
        return nlohmann::json::binary(std::vector<uint8_t>(node->text.begin(), node->text.end()));
      case Node::Type::kList:
      case Node::Type::kTuple:
      case Node::Type::kSet: {
        nlohmann::json array = nlohmann::json::array();
        for (const Node* item : node->items) {
          auto value = to_json(item, depth + 1, values);
          if (!value.ok()) return value.status();
          array.push_back(std::move(*value));
        }
        return array;
      }
      case Node::Type::kDict: {
        nlohmann::json object = nlohmann::json::object();
        for (const auto& [key, item] : node->entries) {
          std::string name;
          if (key->type == Node::Type::kStr) {
            name = key->text;
          } else if (key->type == Node::Type::kInt) {
            name = std::to_string(key->integer);
          } else if (key->type == Node::Type::kUInt) {
            name = std::to_string(key->unsigned_integer);
          } else {
            return invalid_argument(fmt::format("{}: pickle has a dict key of type {} (str or "
                                                "int keys only)",
                                                file_, type_name(key->type)));
          }
          if (std::find(limits_.skipped_keys.begin(), limits_.skipped_keys.end(), name) !=
              limits_.skipped_keys.end()) {
            continue;
          }
          auto value = to_json(item, depth + 1, values);
          if (!value.ok()) return value.status();
          object[name] = std::move(*value);
        }
        return object;
      }
    }
    return internal_error("unknown pickle node type");
  }

  std::string_view bytes_;
  std::string_view file_;
  PickleLimits limits_;
  size_t pos_ = 0;
  size_t op_offset_ = 0;
  std::deque<Node> nodes_;  // every decoded value; addresses stay put as it grows
  std::vector<Node*> stack_;
  std::vector<size_t> marks_;
  std::vector<Node*> memo_dense_;
  std::unordered_map<uint64_t, Node*> memo_sparse_;
  uint64_t memo_count_ = 0;
};

}  // namespace

Result<nlohmann::json> decode_pickle(std::string_view bytes, std::string_view file,
                                     const PickleLimits& limits) {
  return Decoder(bytes, file, limits).run();
}

bool looks_like_pickle(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == kProto &&
         static_cast<uint8_t>(bytes[1]) >= 2 && static_cast<uint8_t>(bytes[1]) <= 5;
}

}  // namespace collide::traces::flight_recorder
