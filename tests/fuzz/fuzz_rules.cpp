// Rule-file text -> load (parse, imports, check) -> lower -> apply: the rule set's own test blocks
// (instantiate, rewrite, run before and after), then every rule over a small fixed model, as
// `fusor rules test` and `optimize --rules` do.
#include <cstdint>
#include <string>

#include "core/onnx/onnx_io.h"
#include "dsl/rules.h"
#include "engine/ruletest/apply.h"
#include "engine/ruletest/rule_tests.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

// A small model of ops the shipped rules are rooted at (tests/fuzz/apply_model.onnx), so fuzzed
// variants of them find something to match. Kept as bytes: each input loads a fresh copy.
const std::string& apply_model_bytes() {
  static const std::string bytes = fusor::serialize_model(*fusor::load_model(FUSOR_SOURCE_DIR "/tests/fuzz/apply_model.onnx"));
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fusor::fuzz::init();
  apply_model_bytes();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fusor;
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_documented_errors([&] {
    dsl::Diagnostics diags;
    // Imports resolve under a folder that does not exist: a fuzzed file reads no other file.
    dsl::RuleSet set = dsl::load_rules_from_text("/nonexistent/fuzz.rules", text, {}, diags);
    diags.str();  // the rendering of every diagnostic (carets, windows of long lines)
    if (diags.has_errors()) return;
    ruletest::TestOptions topts;
    ruletest::run_tests(set, topts);
    std::unique_ptr<Model> m = load_model_from_bytes(apply_model_bytes());
    ruletest::apply_rules(*m, set.rules, ruletest::all_passes());
  });
  return 0;
}
