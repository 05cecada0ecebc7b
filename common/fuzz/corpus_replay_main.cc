// Feeds every file of the given corpus files and folders to a fuzz harness's
// LLVMFuzzerTestOneInput, once each, so the corpus replays as an ordinary test with any compiler.
// A harness reports a bug by crashing or aborting, as under libFuzzer. A corpus is often several
// folders (a component's testdata and its fuzz_corpus): each must exist and hold an input, so
// that one moved or emptied fails the test instead of quietly replaying less.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool replay_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "corpus replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <corpus file or folder>...\n", argv[0]);
    return 2;
  }
  uint64_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    uint64_t from_arg = 0;
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (!entry.is_regular_file()) continue;
        if (!replay_file(entry.path())) return 1;
        ++from_arg;
      }
    } else {
      if (!replay_file(arg)) return 1;
      ++from_arg;
    }
    if (from_arg == 0) {
      std::fprintf(stderr, "corpus replay: no inputs in %s\n", argv[i]);
      return 1;
    }
    replayed += from_arg;
  }
  std::printf("corpus replay: %llu inputs, no crash\n", static_cast<unsigned long long>(replayed));
  return 0;
}
