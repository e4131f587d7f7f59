// onnx_roundtrip_tool [--external] IN OUT [IN OUT ...]: loads each model and saves it (the
// `optimize --level disabled` path without the CLI), for the Python checker test and for timing.
// Prints "IN: error" lines for models that fail and exits 2 if any did.
#include <cstring>
#include <iostream>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"

int main(int argc, char** argv) {
  fusor::SaveOptions so;
  int i = 1;
  if (i < argc && std::strcmp(argv[i], "--external") == 0) {
    so.external_data = true;
    ++i;
  }
  if ((argc - i) % 2 != 0 || argc - i == 0) {
    std::cerr << "usage: onnx_roundtrip_tool [--external] IN OUT [IN OUT ...]\n";
    return 1;
  }
  int failed = 0;
  for (; i + 1 < argc; i += 2) {
    try {
      auto model = fusor::load_model(argv[i]);
      fusor::save_model(*model, argv[i + 1], so);
    } catch (const fusor::Error& e) {
      std::cout << e.what() << "\n";
      ++failed;
    }
  }
  return failed ? 2 : 0;
}
