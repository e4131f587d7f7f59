// The fuzz targets without libFuzzer: a main() that feeds every file named on the command line
// (directories are walked recursively, arguments starting with '-' are ignored, so libFuzzer's
// command line works unchanged) to LLVMFuzzerTestOneInput once, in a sorted order. The ordinary
// (gcc, Release) build links the targets with it, so the FuzzReplay_* tests replay the seed
// corpora and every regression input on each `ctest`; the clang build links libFuzzer instead
// (FUSOR_FUZZ, tests/fuzz/README.md). A finding aborts the process (fuzz_common.h), which fails
// the test; the driver names each input before running it so the log shows which one.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: '%s' is neither a file nor a directory\n", arg.c_str());
      return 1;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay: %s\n", f.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu inputs, no finding\n", files.size());
  return 0;
}
