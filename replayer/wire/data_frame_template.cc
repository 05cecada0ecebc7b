#include "replayer/wire/data_frame_template.h"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "common/bytes.h"

namespace collide::replayer::wire {
namespace {

constexpr size_t kIpOffset = kEthHeaderSize;
constexpr size_t kUdpOffset = kIpOffset + kIpv4HeaderSize;

// The ICRC's pseudo-header through the BTH: the LRH as eight 0xff bytes, then IPv4, UDP, BTH.
constexpr size_t kLrhOnes = 8;
constexpr size_t kMaskedLen = kLrhOnes + kIpv4HeaderSize + kUdpHeaderSize + kBthSize;
// Positions in it of the bytes that vary from frame to frame and are not masked.
constexpr size_t kMaskedIpLength = kLrhOnes + 2;
constexpr size_t kMaskedUdpLength = kLrhOnes + kIpv4HeaderSize + 4;
constexpr size_t kMaskedBth = kLrhOnes + kIpv4HeaderSize + kUdpHeaderSize;

// The four WRITEs; what a RETH-carrying opcode is, without a call per frame.
bool is_write_data(Opcode op) {
  return op == Opcode::kWriteFirst || op == Opcode::kWriteMiddle || op == Opcode::kWriteLast ||
         op == Opcode::kWriteOnly;
}
bool write_has_reth(Opcode op) { return op == Opcode::kWriteFirst || op == Opcode::kWriteOnly; }

}  // namespace

const DataFrameTemplate::HeaderTerms& DataFrameTemplate::header_terms() {
  static const HeaderTerms terms = [] {
    auto at = [](size_t position) { return crc32_byte_terms(kMaskedLen - 1 - position); };
    return HeaderTerms{at(kMaskedIpLength),     at(kMaskedIpLength + 1),
                       at(kMaskedUdpLength),    at(kMaskedUdpLength + 1),
                       at(kMaskedBth),          at(kMaskedBth + 1),
                       at(kMaskedBth + 8),      at(kMaskedBth + 9),
                       at(kMaskedBth + 10),     at(kMaskedBth + 11)};
  }();
  return terms;
}

DataFrameTemplate::DataFrameTemplate(const Endpoints& endpoints, uint32_t dest_qp,
                                     uint32_t typical_payload_len)
    : terms_(&header_terms()) {
  // The generic writer lays out the fixed bytes; lengths, opcode, PSN and RETH are zeroed below.
  RoceHeaders h;
  h.endpoints = endpoints;
  h.endpoints.tos = 0;
  h.bth.opcode = Opcode::kWriteFirst;
  h.bth.dest_qp = dest_qp & 0xffffff;
  h.reth = Reth{};
  std::array<uint8_t, kHeadersWithReth + kIcrcSize> frame{};
  (void)write_roce_frame(frame, h, {});
  std::memcpy(header_.data(), frame.data(), header_.size());
  uint8_t* ip = header_.data() + kIpOffset;
  uint8_t* bth = header_.data() + kBthOffset;
  bytes::store_be16(ip + 2, 0);   // total length
  bytes::store_be16(ip + 10, 0);  // checksum
  bytes::store_be16(header_.data() + kUdpOffset + 4, 0);  // UDP length
  bth[0] = 0;  // opcode
  bth[1] = 0;  // pad count (solicited, migration and version stay 0)
  std::memset(bth + 8, 0, 4 + kRethSize);  // AckReq, PSN, RETH

  for (size_t i = 0; i < kIpv4HeaderSize; i += 2) ipv4_fixed_sum_ += bytes::load_be16(ip + i);

  // The pseudo-header as the ICRC sees it (compute_icrc's masking), varying bytes zero.
  std::array<uint8_t, kMaskedLen> masked{};
  std::memset(masked.data(), 0xff, kLrhOnes);
  std::memcpy(masked.data() + kLrhOnes, ip, kMaskedLen - kLrhOnes);
  uint8_t* mip = masked.data() + kLrhOnes;
  mip[1] = 0xff;   // TOS
  mip[8] = 0xff;   // TTL
  mip[10] = 0xff;  // checksum
  mip[11] = 0xff;
  uint8_t* mudp = mip + kIpv4HeaderSize;
  mudp[6] = 0xff;  // UDP checksum
  mudp[7] = 0xff;
  mudp[kUdpHeaderSize + 4] = 0xff;  // BTH FECN, BECN, reserved
  bth_register_ = ~crc32_of(masked);

  usual_tos_ = endpoints.tos;
  const size_t typical_frame_len = kHeadersWithoutReth + size_t{typical_payload_len} + kIcrcSize;
  if (typical_payload_len == 0 || typical_payload_len % 4 != 0 ||
      typical_frame_len - kEthHeaderSize > 0xffff) {
    return;  // no typical frames (a pad would vary the header: lengths that need none only)
  }
  typical_shift_.emplace(typical_payload_len);
  // The prebuilt frames come from finish itself, with AckReq, PSN and the payload's CRC zero:
  // a typical frame is that frame with the word's and the payload's terms added.
  std::vector<uint8_t> scratch(typical_frame_len);
  for (size_t i = 0; i < prebuilt_.size(); ++i) {
    DataFrameFields f;
    f.opcode = i == 0 ? Opcode::kWriteMiddle : Opcode::kWriteLast;
    f.tos = usual_tos_;
    f.payload_len = typical_payload_len;
    if (!finish(scratch, f, 0).ok()) return;
    std::memcpy(prebuilt_[i].header.data(), scratch.data(), kHeadersWithoutReth);
    prebuilt_[i].icrc = bytes::load_le32(scratch.data() + typical_frame_len - kIcrcSize);
  }
  const std::array<const Crc32ByteTerms*, 4> word_bytes = {&terms_->ack_request, &terms_->psn_hi,
                                                           &terms_->psn_mid, &terms_->psn_lo};
  for (size_t k = 0; k < word_bytes.size(); ++k) {
    for (size_t d = 0; d < 256; ++d) {
      word_terms_[k][d] = typical_shift_->apply((*word_bytes[k])[d]);
    }
  }
  typical_payload_len_ = typical_payload_len;
  typical_frame_len_ = typical_frame_len;
}

Result<size_t> DataFrameTemplate::finish(std::span<uint8_t> out, const DataFrameFields& f,
                                         uint32_t payload_crc) const {
  const bool reth = write_has_reth(f.opcode);
  const size_t headers = reth ? kHeadersWithReth : kHeadersWithoutReth;
  const uint32_t pad = (4 - (f.payload_len & 3)) & 3;
  const size_t frame_len = headers + size_t{f.payload_len} + pad + kIcrcSize;
  if (!is_write_data(f.opcode) || frame_len > out.size() ||
      frame_len - kEthHeaderSize > 0xffff) {
    return invalid_argument(fmt::format(
        "data frame with opcode 0x{:02x} and a {}-byte payload does not fit a {}-byte buffer or "
        "is not an RDMA WRITE", static_cast<int>(f.opcode), f.payload_len, out.size()));
  }
  uint8_t* p = out.data();
  // Constant sizes: a few vector moves, not a string copy.
  if (reth) {
    std::memcpy(p, header_.data(), kHeadersWithReth);
  } else {
    std::memcpy(p, header_.data(), kHeadersWithoutReth);
  }
  const auto ip_len = static_cast<uint32_t>(frame_len - kEthHeaderSize);
  const uint32_t udp_len = ip_len - kIpv4HeaderSize;
  uint8_t* ip = p + kIpOffset;
  ip[1] = f.tos;
  bytes::store_be16(ip + 2, static_cast<uint16_t>(ip_len));
  // The checksum from the fixed fields' sum and the two that vary (RFC 1624's incremental
  // update, from a template whose varying fields are zero).
  uint32_t sum = ipv4_fixed_sum_ + ip_len + f.tos;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  bytes::store_be16(ip + 10, static_cast<uint16_t>(~sum));
  bytes::store_be16(p + kUdpOffset + 4, static_cast<uint16_t>(udp_len));
  uint8_t* bth = p + kBthOffset;
  // Byte values held in 32-bit variables: spilled as bytes and reloaded wider, they stalled
  // store forwarding, which cost more than the rest of the frame.
  const uint32_t opcode = static_cast<uint8_t>(f.opcode);
  const uint32_t pad_byte = pad << 4;
  const uint32_t psn = f.psn & kMaxPsn;
  const uint32_t ack_byte = f.ack_request ? 0x80 : 0;
  bytes::store_be16(bth, static_cast<uint16_t>(opcode << 8 | pad_byte));
  bytes::store_be32(bth + 8, ack_byte << 24 | psn);
  if (reth) {
    bytes::store_be64(bth + kBthSize, f.reth_address);
    bytes::store_be32(bth + kBthSize + 12, f.reth_length);
  }
  uint8_t* payload_end = p + headers + f.payload_len;
  // The pad's zeros, in one store: whatever it writes past the pad the ICRC overwrites.
  std::memset(payload_end, 0, kIcrcSize);

  // The ICRC: the template's register, each varying byte's term, then the RETH as written and
  // the payload and pad from their CRCs. No header byte is read back.
  const HeaderTerms& t = *terms_;
  const uint32_t bth_register =
      bth_register_ ^ t.ip_length_hi[ip_len >> 8] ^ t.ip_length_lo[ip_len & 0xff] ^
      t.udp_length_hi[udp_len >> 8] ^ t.udp_length_lo[udp_len & 0xff] ^ t.opcode[opcode] ^
      t.pad_byte[pad_byte] ^ t.ack_request[ack_byte] ^ t.psn_hi[psn >> 16] ^
      t.psn_mid[(psn >> 8) & 0xff] ^ t.psn_lo[psn & 0xff];
  uint32_t crc = ~bth_register;
  if (reth) crc = crc32_update(crc, {bth + kBthSize, kRethSize});
  if (pad == 0 && typical_shift_ && f.payload_len == typical_shift_->length()) {
    crc = typical_shift_->concat(crc, payload_crc);
  } else {
    crc = crc32_concat(crc, payload_crc, f.payload_len);
    if (pad != 0) crc = crc32_concat(crc, crc32_of_zeros(pad), pad);
  }
  bytes::store_le32(payload_end + pad, crc);
  return frame_len;
}

}  // namespace collide::replayer::wire
