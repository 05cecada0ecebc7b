// How much framing costs: building a complete RoCEv2 frame (headers, IPv4 checksum, ICRC) against
// copying the same number of bytes, also when the payload's CRC is known (finish_roce_frame), from
// a QP's frame template (what the sender does), and the ICRC against a plain CRC-32 over the same
// bytes.
#include <zlib.h>

#include <cstring>
#include <vector>

#include "common/bench/figures.h"
#include "replayer/wire/crc32.h"
#include "replayer/wire/data_frame_template.h"
#include "replayer/wire/icrc.h"
#include "replayer/wire/roce_frame.h"

namespace {

using namespace collide::replayer::wire;

RoceHeaders headers() {
  RoceHeaders h;
  h.endpoints.src_ip = *Ipv4Address::parse("198.18.0.1");
  h.endpoints.dst_ip = *Ipv4Address::parse("198.18.0.2");
  h.bth.opcode = Opcode::kWriteMiddle;
  h.bth.dest_qp = 17;
  return h;
}

void BM_BuildFrame(benchmark::State& state) {
  const auto payload_len = static_cast<size_t>(state.range(0));
  RoceHeaders h = headers();
  std::vector<uint8_t> payload(payload_len, 0xab);
  std::vector<uint8_t> out(roce_frame_size(h, payload_len));
  for (auto _ : state) {
    h.bth.psn = (h.bth.psn + 1) & kMaxPsn;
    benchmark::DoNotOptimize(write_roce_frame(out, h, payload).ok());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

// A sender's way: the payload (zeros, as when payloads are not verified) is already in the
// buffer and its CRC known, so only headers and ICRC are written. PSNs change as on a QP.
void BM_FinishFrame(benchmark::State& state) {
  const auto payload_len = static_cast<size_t>(state.range(0));
  RoceHeaders h = headers();
  std::vector<uint8_t> out(roce_frame_size(h, payload_len));
  for (auto _ : state) {
    h.bth.psn = (h.bth.psn + 1) & kMaxPsn;
    benchmark::DoNotOptimize(
        finish_roce_frame(out, h, payload_len, crc32_of_zeros(payload_len)).ok());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

// The sender's way since frame templates: a MIDDLE frame of the QP's MTU is the template's
// header, the AckReq/PSN word and the ICRC from lookups; the zero payload is already in place.
void BM_TemplateFrame(benchmark::State& state) {
  const auto payload_len = static_cast<uint32_t>(state.range(0));
  const RoceHeaders h = headers();
  const DataFrameTemplate tmpl(h.endpoints, h.bth.dest_qp, payload_len);
  const uint32_t zeros = crc32_of_zeros(payload_len);
  std::vector<uint8_t> out(roce_frame_size(h, payload_len));
  uint32_t psn = 0;
  for (auto _ : state) {
    psn = (psn + 1) & kMaxPsn;
    benchmark::DoNotOptimize(
        tmpl.write_typical(out.data(), Opcode::kWriteMiddle, (psn & 15) == 0, psn, zeros));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

// The peer: copying a prebuilt frame of the same size, what a replayer without per-packet framing
// would do at best.
void BM_CopyFrame(benchmark::State& state) {
  const auto payload_len = static_cast<size_t>(state.range(0));
  std::vector<uint8_t> frame(roce_frame_size(headers(), payload_len), 0xab);
  std::vector<uint8_t> out(frame.size());
  for (auto _ : state) {
    std::memcpy(out.data(), frame.data(), frame.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

void BM_Icrc(benchmark::State& state) {
  std::vector<uint8_t> frame(roce_frame_size(headers(), static_cast<size_t>(state.range(0))));
  (void)write_roce_frame(frame, headers(), std::vector<uint8_t>(state.range(0), 1));
  std::span<const uint8_t> ip(frame.data() + kEthHeaderSize, frame.size() - kEthHeaderSize - 4);
  for (auto _ : state) benchmark::DoNotOptimize(compute_icrc(ip));
  state.SetItemsProcessed(state.iterations());
}

void BM_PlainCrc32(benchmark::State& state) {
  std::vector<uint8_t> data(roce_frame_size(headers(), static_cast<size_t>(state.range(0))) -
                                kEthHeaderSize - 4 + 8,
                            1);
  for (auto _ : state) {
    benchmark::DoNotOptimize(crc32(0, data.data(), static_cast<uInt>(data.size())));
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_BuildFrame)->Arg(1024)->Arg(4096);
BENCHMARK(BM_FinishFrame)->Arg(1024)->Arg(4096);
BENCHMARK(BM_TemplateFrame)->Arg(1024)->Arg(4096);
BENCHMARK(BM_CopyFrame)->Arg(1024)->Arg(4096);
BENCHMARK(BM_Icrc)->Arg(4096);
BENCHMARK(BM_PlainCrc32)->Arg(4096);

}  // namespace

int main(int argc, char** argv) {
  return collide::bench::run_and_print_ratios(
      argc, argv,
      {{"frame_build_vs_copy_1k", "BM_BuildFrame/1024", "BM_CopyFrame/1024"},
       {"frame_build_vs_copy_4k", "BM_BuildFrame/4096", "BM_CopyFrame/4096"},
       {"frame_finish_vs_copy_1k", "BM_FinishFrame/1024", "BM_CopyFrame/1024"},
       {"frame_finish_vs_copy_4k", "BM_FinishFrame/4096", "BM_CopyFrame/4096"},
       {"frame_template_vs_copy_1k", "BM_TemplateFrame/1024", "BM_CopyFrame/1024"},
       {"frame_template_vs_copy_4k", "BM_TemplateFrame/4096", "BM_CopyFrame/4096"},
       {"icrc_vs_plain_crc32_4k", "BM_Icrc/4096", "BM_PlainCrc32/4096"}});
}
