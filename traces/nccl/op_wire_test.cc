#include "traces/nccl/op_wire.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "collide/trace.pb.h"
#include "traces/nccl/nccl_log_parser.h"
#include "traces/nccl/nccl_test_util.h"
#include "traces/nccl/nccl_trace_builder.h"

// The hand-written Op encoding against the protobuf library's own serialization of the same Op.
namespace collide::traces::nccl {
namespace {

v1::Op as_message(const OpWireFields& f) {
  v1::Op op;
  op.set_rank(f.rank);
  op.set_index(f.index);
  op.set_kind(static_cast<v1::OpKind>(f.kind));
  op.set_comm(std::string(f.comm));
  op.set_count(f.count);
  op.set_datatype(static_cast<v1::DataType>(f.datatype));
  op.set_bytes(f.bytes);
  op.set_root(f.root);
  op.set_reduce_op(static_cast<v1::ReduceOp>(f.reduce_op));
  if (f.has_enqueue_time) op.set_enqueue_time_ns(f.enqueue_time_ns);
  op.set_op_count(f.op_count);
  op.set_group(f.group);
  op.set_source_line(f.source_line);
  op.set_source_file(f.source_file);
  return op;
}

// What protobuf writes for the op in a delimited stream: the length as a varint, then the body.
std::string protobuf_delimited(const v1::Op& op) {
  const std::string body = op.SerializeAsString();
  std::string out;
  for (uint64_t v = body.size();; v >>= 7) {
    out.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    if (v < 0x80) break;
  }
  return out + body;
}

std::string ours(const OpWireFields& f) {
  std::string out(max_op_wire_size(f.comm.size()), '\0');
  char* end = write_delimited_op(f, out.data());
  out.resize(static_cast<size_t>(end - out.data()));
  return out;
}

TEST(OpWire, ZeroFieldsAreLeftOutAndPresentTimeIsKept) {
  OpWireFields f;
  f.source_line = 0;
  EXPECT_EQ(ours(f), protobuf_delimited(as_message(f)));
  f.has_enqueue_time = true;  // a present zero is written
  f.enqueue_time_ns = 0;
  EXPECT_EQ(ours(f), protobuf_delimited(as_message(f)));
  OpWireFields absent;
  EXPECT_NE(ours(f), ours(absent));
}

TEST(OpWire, NegativeRootTakesTenBytesLikeProtobuf) {
  OpWireFields f;
  f.root = -1;
  f.comm = "c0";
  f.source_line = 12;
  const std::string bytes = ours(f);
  EXPECT_EQ(bytes, protobuf_delimited(as_message(f)));
  // tag 0x40 then ten bytes of a sign-extended -1.
  EXPECT_NE(bytes.find(std::string("\x40\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11)),
            std::string::npos);
}

TEST(OpWire, RandomOpsMatchProtobuf) {
  std::mt19937_64 rng(20261123);
  // Values around every varint length boundary, and zero.
  auto value = [&rng]() -> uint64_t {
    const unsigned bits = static_cast<unsigned>(rng() % 65);
    if (bits == 0) return 0;
    const uint64_t v = rng() >> (64 - bits);
    return rng() % 4 == 0 ? (bits == 64 ? ~0ull : (1ull << bits) - 1) : v;
  };
  const std::string long_name(300, 'p');  // a length prefix of two bytes, for the comm and op
  for (int i = 0; i < 20000; ++i) {
    OpWireFields f;
    f.rank = static_cast<uint32_t>(value());
    f.index = value();
    f.kind = static_cast<int32_t>(rng() % 16);
    const uint64_t comm = rng() % 8;
    f.comm = comm == 0 ? std::string_view() : comm == 1 ? std::string_view(long_name) : "c17";
    f.count = value();
    f.datatype = static_cast<int32_t>(rng() % 13);
    f.bytes = value();
    f.root = static_cast<int32_t>(static_cast<int64_t>(rng() % 2000) - 1000);
    f.reduce_op = static_cast<int32_t>(rng() % 7);
    f.has_enqueue_time = rng() % 2 == 0;
    f.enqueue_time_ns = value();
    f.op_count = value();
    f.group = static_cast<uint32_t>(value());
    f.source_line = value();
    f.source_file = static_cast<uint32_t>(value());
    ASSERT_EQ(ours(f), protobuf_delimited(as_message(f))) << "op " << i;
  }
}

// The one-pass writer against protobuf, over runs of ops that share their fields 5-9 (the ranks of
// one collective) and ops that change one of them, which the writer must not take from the last.
TEST(OpWire, OpWriterMatchesProtobufAcrossRepeatedAndChangedFields) {
  std::mt19937_64 rng(20261124);
  auto value = [&rng]() -> uint64_t {
    const unsigned bits = static_cast<unsigned>(rng() % 65);
    if (bits == 0) return 0;
    return bits == 64 ? rng() : rng() >> (64 - bits);
  };
  const std::string comms[] = {"", "c0", "c17", "c1234567890123"};
  CommField fields[4];
  for (int c = 0; c < 4; ++c) ASSERT_TRUE(make_comm_field(comms[c], fields[c]));
  CommField too_long;
  EXPECT_FALSE(make_comm_field("c12345678901234", too_long));

  OpWriter writer;
  OpWireFields f;
  int written = 0;
  for (int run = 0; run < 3000; ++run) {
    // A new shape, or the last one with one field changed.
    switch (rng() % 7) {
      case 0: f.count = value(); break;
      case 1: f.datatype = static_cast<int32_t>(rng() % 13); break;
      case 2: f.bytes = value(); break;
      case 3: f.root = static_cast<int32_t>(static_cast<int64_t>(rng() % 2000) - 1000); break;
      case 4: f.reduce_op = static_cast<int32_t>(rng() % 7); break;
      case 5: f = OpWireFields(); break;  // all zero: no bytes for 5-9
      default:
        f.count = value();
        f.datatype = static_cast<int32_t>(rng() % 13);
        f.bytes = value();
        f.root = -1;
        f.reduce_op = static_cast<int32_t>(rng() % 7);
    }
    for (int i = 0, n = static_cast<int>(rng() % 6); i < n; ++i, ++written) {
      const int c = static_cast<int>(rng() % 4);
      f.rank = static_cast<uint32_t>(value());
      f.comm = comms[c];
      f.index = value();
      f.kind = static_cast<int32_t>(rng() % 16);
      f.has_enqueue_time = rng() % 2 == 0;
      f.enqueue_time_ns = value();  // with big values, bodies of over 127 bytes
      f.op_count = value();
      f.group = static_cast<uint32_t>(value());
      f.source_line = value();
      f.source_file = static_cast<uint32_t>(value());
      std::string out(OpWriter::kRoom, '\0');
      char* end = writer.write(f.rank, fields[c], f, out.data());
      out.resize(static_cast<size_t>(end - out.data()));
      ASSERT_EQ(out, protobuf_delimited(as_message(f))) << "run " << run << " op " << i;
    }
  }
  EXPECT_GT(written, 5000);
}

TEST(OpWire, BufferKeepsWhatWasWrittenWhenItGrows) {
  WireBuffer buffer;
  std::string expected;
  OpWireFields f;
  f.comm = "c3";
  f.source_file = 1;
  for (uint64_t i = 0; i < 5000; ++i) {
    f.index = i;
    f.source_line = i * 7;
    char* at = buffer.reserve(max_op_wire_size(f.comm.size()));
    buffer.set_end(write_delimited_op(f, at));
    expected += protobuf_delimited(as_message(f));
  }
  EXPECT_EQ(std::string(buffer.data(), buffer.size()), expected);
}

// The importer's serialization of every test log against its ops serialized by protobuf.
TEST(OpWire, BuilderSerializationMatchesItsMessages) {
  const std::string dir = COLLIDE_NCCL_TESTDATA;
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string content = text.str();
    ImportOptions options;
    NcclTraceBuilder builder(options);
    builder.start_file(entry.path().string());
    ASSERT_TRUE(builder.add(parse_log_text(content)).ok());
    ASSERT_TRUE(builder.end_file().ok());
    ASSERT_TRUE(builder.finish().ok());
    std::string expected;
    ASSERT_TRUE(builder
                    .write_ops([&](const v1::Op& op) {
                      expected += protobuf_delimited(op);
                      return Status();
                    })
                    .ok());
    WireBuffer buffer;
    builder.serialize_ops(0, builder.ops(), buffer);
    EXPECT_EQ(std::string(buffer.data(), buffer.size()), expected) << entry.path();
    if (builder.ops() > 0) ++logs;
  }
  EXPECT_GE(logs, 8);
}

}  // namespace
}  // namespace collide::traces::nccl
