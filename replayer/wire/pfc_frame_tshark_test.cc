// What collide sends as PFC is PFC to the tools engineers check a fabric with: tshark (Wireshark's
// MAC control dissector, which calls 802.1Qbb class-based flow control CBFC) decodes our frames
// with the opcode, the priorities enabled and each priority's pause time. Needs tshark.
#include <pcap/pcap.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/process.h"
#include "replayer/wire/pfc_frame.h"
#include "tests/support/privileged.h"

namespace collide::replayer::wire {
namespace {

// Frames into a classic pcap file, through libpcap (Ethernet link type).
void write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  ASSERT_NE(dead, nullptr);
  pcap_dumper_t* dumper = pcap_dump_open(dead, path.c_str());
  ASSERT_NE(dumper, nullptr) << pcap_geterr(dead);
  for (size_t i = 0; i < frames.size(); ++i) {
    pcap_pkthdr header{};
    header.ts.tv_sec = static_cast<time_t>(i);
    header.caplen = header.len = static_cast<bpf_u_int32>(frames[i].size());
    pcap_dump(reinterpret_cast<u_char*>(dumper), &header, frames[i].data());
  }
  pcap_dump_close(dumper);
  pcap_close(dead);
}

TEST(PfcFrameTsharkTest, TsharkDecodesOurFramesAsPfcWithTheirPrioritiesAndQuanta) {
  COLLIDE_REQUIRE(testing::missing_tool("tshark"));
  const auto source = MacAddress::parse("02:00:00:00:00:07");
  ASSERT_TRUE(source.ok());
  PauseFrame storm;  // priority 3 (RoCE's usual lossless class) for the longest time
  storm.source = *source;
  storm.enabled = 1 << 3;
  storm.quanta[3] = 0xffff;
  PauseFrame mixed;  // priorities 3 and 6 with times of their own
  mixed.source = *source;
  mixed.enabled = (1 << 3) | (1 << 6);
  mixed.quanta[3] = 1234;
  mixed.quanta[6] = 7;
  PauseFrame resume;  // XON for priority 3
  resume.source = *source;
  resume.enabled = 1 << 3;
  std::vector<std::vector<uint8_t>> frames;
  for (const PauseFrame& p : {storm, mixed, resume}) {
    std::vector<uint8_t> frame(kMacControlFrameSize);
    auto len = encode_pfc(p, frame);
    ASSERT_TRUE(len.ok()) << len.status().to_string();
    frames.push_back(frame);
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / ("collide-pfc-" + std::to_string(getpid()) + ".pcap")).string();
  write_pcap(path, frames);

  // Only tshark's standard output: as root it warns on stderr.
  auto out = process::run_command(
      {"sh", "-c", "tshark -r '" + path + "' -T fields -E separator=, -e frame.protocols -e macc.opcode "
                   "-e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 -e macc.cbfc.pause_time.c6 "
                   "-e macc.cbfc.pause_time.c0 2>/dev/null"});
  std::filesystem::remove(path);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->exit_code, 0) << out->output;
  EXPECT_EQ(out->output,
            "eth:ethertype:macc,0x0101,0x0008,65535,0,0\n"
            "eth:ethertype:macc,0x0101,0x0048,1234,7,0\n"
            "eth:ethertype:macc,0x0101,0x0008,0,0,0\n");
}

}  // namespace
}  // namespace collide::replayer::wire
