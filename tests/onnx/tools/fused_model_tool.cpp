// fused_model_tool OUTDIR: for every fusor-domain op, builds the one-node model of
// tests/onnx/fused_models.h, loads it with fusor (shape inference through the fusor schemas),
// saves it with value_info, and writes OUTDIR/<Op>.onnx plus OUTDIR/<Op>.shape (the output shape
// fusor inferred, "1x4x4x4"), for the Python onnx.checker test (python_fused_checker.py).
#include <fstream>
#include <iostream>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "tests/onnx/fused_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fused_model_tool OUTDIR\n";
    return 1;
  }
  const std::string dir = argv[1];
  int failed = 0;
  for (const auto& c : fusor::test::fused_cases()) {
    try {
      const std::string src = dir + "/" + c.op + ".src.onnx";
      fusor::test::write_bytes(src, fusor::test::fused_model(c).SerializeAsString());
      auto model = fusor::load_model(src);
      fusor::SaveOptions so;
      so.value_info = true;
      fusor::save_model(*model, dir + "/" + c.op + ".onnx", so);
      const auto& y = model->graph->value(model->graph->outputs()[0]).type;
      std::ofstream(dir + "/" + c.op + ".shape") << (y.static_shape() ? fusor::shape_str(*y.static_shape()) : "?") << "\n";
    } catch (const fusor::Error& e) {
      std::cout << c.op << ": " << e.what() << "\n";
      ++failed;
    }
  }
  return failed ? 2 : 0;
}
