// Model bytes -> load -> optimize at extended and at all -> plan -> run, as `fusor run` does it
// (random inputs, one thread, a one-second budget per run through RunControl).
#include <chrono>
#include <cstdint>
#include <string>

#include "core/onnx/onnx_io.h"
#include "engine/exec/executor.h"
#include "engine/session/inputs.h"
#include "engine/session/optimize.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusor::fuzz::init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fusor;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (OptLevel level : {OptLevel::Extended, OptLevel::All}) {
    fuzz::expect_documented_errors([&] {
      // External data resolves in a folder that does not exist: a fuzzed model reads no files.
      std::unique_ptr<Model> model = load_model_from_bytes(bytes, {}, "fuzz.onnx", "/nonexistent/fuzz");
      OptimizeOptions o;
      o.level = level;
      optimize(*model, o);
      ExecOptions eo;
      eo.threads = 1;
      Executor ex(*model, eo);
      NamedTensors inputs;
      complete_inputs(*model->graph, inputs, InputOptions{}, nullptr);
      RunControl control;
      control.deadline = RunControl::Clock::now() + std::chrono::seconds(1);
      ex.run(inputs, nullptr, &control);
    });
  }
  return 0;
}
