// Provider-definition text -> the provider parser and its checks.
#include <cstdint>
#include <string>

#include "dsl/provider.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusor::fuzz::init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fusor;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_documented_errors([&] {
    dsl::Diagnostics diags;
    dsl::parse_provider_text("/nonexistent/fuzz.provider", text, {}, diags);
    diags.str();
  });
  return 0;
}
