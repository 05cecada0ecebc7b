#include "traces/chakra/et_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <unistd.h>

#include <cerrno>

namespace collide::traces::chakra {

using google::protobuf::io::CodedInputStream;

EtDecoder::EtDecoder(google::protobuf::io::ZeroCopyInputStream* input, std::string name)
    : input_(input), name_(std::move(name)) {}

EtDecoder::~EtDecoder() {
  file_.reset();
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<EtDecoder>> EtDecoder::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_status(errno, fmt::format("opening Chakra trace {}", path));
  auto file = std::make_unique<google::protobuf::io::FileInputStream>(fd);
  std::unique_ptr<EtDecoder> decoder(new EtDecoder(file.get(), path));
  decoder->file_ = std::move(file);
  decoder->fd_ = fd;
  return decoder;
}

std::string EtDecoder::where() const {
  return fmt::format("{}: record {} (byte {})", name_, records_, record_offset_);
}

Result<bool> EtDecoder::read_record(std::string& bytes) {
  record_offset_ = offset_;
  CodedInputStream coded(input_);
  // The length prefix is read a byte at a time so that a clean end of file (no byte at all) can be
  // told from a prefix cut short.
  uint32_t length = 0;
  int shift = 0;
  for (int i = 0;; ++i) {
    uint8_t byte = 0;
    if (!coded.ReadRaw(&byte, 1)) {
      if (i == 0) return false;
      return data_loss(fmt::format("{}: truncated length prefix", where()));
    }
    ++offset_;
    if (i == 4 && (byte & 0xf0) != 0) {
      return invalid_argument(
          fmt::format("{}: length prefix overflows 32 bits; not a Chakra .et file", where()));
    }
    length |= static_cast<uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
    shift += 7;
  }
  if (length > kMaxRecordBytes) {
    return invalid_argument(
        fmt::format("{}: record length {} bytes exceeds the {} byte limit; not a Chakra .et file",
                    where(), length, kMaxRecordBytes));
  }
  bytes.clear();
  if (!coded.ReadString(&bytes, static_cast<int>(length))) {
    return data_loss(fmt::format("{}: truncated: the record needs {} bytes, the file ends first",
                                 where(), length));
  }
  offset_ += length;
  return true;
}

Status EtDecoder::read_metadata(ChakraProtoMsg::GlobalMetadata& metadata) {
  std::string bytes;
  auto got = read_record(bytes);
  if (!got.ok()) {
    // Whatever went wrong with the very first record, the file is not a usable .et file.
    return invalid_argument(fmt::format("{} (not a Chakra .et file)", got.status().message()));
  }
  if (!*got) return invalid_argument(fmt::format("{}: empty file; not a Chakra .et file", name_));
  // Text and random bytes often parse as some protobuf, but not as a GlobalMetadata without
  // fields this schema does not know.
  if (!metadata.ParseFromString(bytes) ||
      !metadata.GetReflection()->GetUnknownFields(metadata).empty()) {
    return invalid_argument(fmt::format(
        "{}: not a Chakra .et file (the first record is not a GlobalMetadata)", where()));
  }
  ++records_;
  metadata_read_ = true;
  return {};
}

Result<bool> EtDecoder::next(ChakraProtoMsg::Node& node) {
  if (!metadata_read_) {
    return failed_precondition(fmt::format("{}: read_metadata must come first", name_));
  }
  std::string bytes;
  auto got = read_record(bytes);
  if (!got.ok()) return got.status();
  if (!*got) return false;
  if (!node.ParseFromString(bytes)) {
    return invalid_argument(fmt::format("{}: not a Chakra Node", where()));
  }
  ++records_;
  return true;
}

void append_delimited(const google::protobuf::MessageLite& message, std::string& out) {
  const size_t size = message.ByteSizeLong();
  uint8_t prefix[5];
  const uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      static_cast<uint32_t>(size), prefix);
  out.append(reinterpret_cast<const char*>(prefix), static_cast<size_t>(end - prefix));
  message.AppendToString(&out);
}

}  // namespace collide::traces::chakra
