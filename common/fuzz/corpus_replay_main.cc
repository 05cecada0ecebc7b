// Feeds every file of the given corpus files and folders to a fuzz harness's
// LLVMFuzzerTestOneInput, once each, so the corpus replays as an ordinary test with any compiler.
// A harness reports a bug by crashing or aborting, as under libFuzzer.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void replay_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (!entry.is_regular_file()) continue;
        replay_file(entry.path());
        ++replayed;
      }
    } else {
      replay_file(arg);
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "corpus replay: no inputs found\n");
    return 1;
  }
  std::printf("corpus replay: %llu inputs, no crash\n", static_cast<unsigned long long>(replayed));
  return 0;
}
