// Tensor-file bytes -> the reader of `--input FILE` (read_tensor_bytes: .npy or TensorProto),
// with every byte read once so a tensor whose data does not match its shape shows up under
// AddressSanitizer.
#include <cstdint>
#include <string>

#include "core/onnx/tensor_io.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

double touch(const fusor::Tensor& t) {
  double sum = 0;
  if (t.dtype() == fusor::DataType::String) return 0;
  const unsigned char* p = static_cast<const unsigned char*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) sum += p[i];
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusor::fuzz::init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fusor;
  volatile double sink = 0;
  fuzz::expect_documented_errors([&] {
    std::string name;
    // External data resolves under a folder that does not exist: a fuzzed file reads no other.
    Tensor t = read_tensor_bytes(std::string(reinterpret_cast<const char*>(data), size), "/nonexistent/fuzz.pb", &name);
    sink = sink + touch(t);
  });
  return 0;
}
