// Corrupted models never crash the loader: each mutation either loads (and then saves) or throws
// fusor::Error(BadInput).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"

using namespace fusor;

namespace {

std::string read_all(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

}  // namespace

TEST(Fuzz, MutatedModelsLoadOrFailCleanly) {
  const char* models[] = {"node/test_loop11", "node/test_if", "node/test_scan9_sum", "node/test_conv_with_strides_padding",
                          "node/test_constant", "node/test_reshape_extended_dims", "simple/test_sequence_model1",
                          "node/test_cast_STRING_to_FLOAT", "node/test_scan_sum", "node/test_loop13_seq", "node/test_if_seq",
                          "node/test_optional_get_element_sequence", "node/test_sequence_map_add_2_sequences",
                          "node/test_layer_normalization_2d_axis0", "pytorch-converted/test_ConvTranspose2d"};
  // FUSOR_FUZZ_TRIALS / FUSOR_FUZZ_SEED run a longer or different campaign locally.
  const char* env_trials = std::getenv("FUSOR_FUZZ_TRIALS");
  const char* env_seed = std::getenv("FUSOR_FUZZ_SEED");
  const int trials = env_trials ? std::atoi(env_trials) : 250;
  std::mt19937 rng(env_seed ? static_cast<unsigned>(std::atoi(env_seed)) : 1234u);
  int loaded = 0, rejected = 0;
  for (const char* m : models) {
    std::string bytes = read_all(std::string("/usr/share/libonnx-testdata/data/") + m + "/model.onnx");
    ASSERT_FALSE(bytes.empty()) << m;
    for (int trial = 0; trial < trials; ++trial) {
      std::string b = bytes;
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        size_t pos = rng() % b.size();
        switch (rng() % 4) {
          case 0: b[pos] = static_cast<char>(rng()); break;
          case 1: b[pos] ^= static_cast<char>(1u << (rng() % 8)); break;
          case 2: b.erase(pos, 1 + rng() % 8); break;
          default: b.insert(pos, 1, static_cast<char>(rng())); break;
        }
        if (b.empty()) b.push_back('x');
      }
      try {
        auto model = load_model_from_bytes(b, {}, m);
        model->graph->verify();
        serialize_model(*model);
        ++loaded;
      } catch (const Error& e) {
        ASSERT_EQ(e.kind(), ErrorKind::BadInput) << m << " trial " << trial << ": " << e.what();
        ++rejected;
      }
    }
  }
  std::cout << "[fuzz] loaded " << loaded << ", rejected " << rejected << "\n";
  EXPECT_GT(rejected, 0);
}
