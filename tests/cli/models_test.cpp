// inspect's counts on the larger exported test models (scripts/make_test_models.py), against a
// recursive count done by onnx in Python. The models live in a per-machine cache; without them the
// test is skipped with the command that makes them (CI does not need torch).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "tests/cli/cli_harness.h"

namespace fusor::clitest {
namespace {

std::string models_dir() {
  if (const char* d = std::getenv("FUSOR_MODELS"); d && *d) return d;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/fusor/models";
}

const char* kReference = R"(
import collections, json, sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
c = {"nodes": len(m.graph.node), "subgraph_nodes": 0, "constant_nodes": 0, "initializer_bytes": 0}
ops = collections.Counter()
def walk(g, depth):
    c["initializer_bytes"] += sum(numpy_helper.to_array(t).nbytes for t in g.initializer)
    for n in g.node:
        if depth > 0: c["subgraph_nodes"] += 1
        if n.op_type == "Constant": c["constant_nodes"] += 1
        ops[n.op_type if n.domain in ("", "ai.onnx") else n.domain + "." + n.op_type] += 1
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                walk(sub, depth + 1)
walk(m.graph, 0)
c["ops"] = ops
print(json.dumps(c))
)";

TEST(InspectModels, CountsMatchOnnxInPython) {
  int checked = 0;
  for (const char* name : {"resnet18", "mobilenet_v2", "transformer", "if_lstm", "convnext_tiny"}) {
    std::string path = models_dir() + "/" + name + ".onnx";
    if (!std::filesystem::exists(path)) continue;
    SCOPED_TRACE(path);
    json::Value want = json::parse(run_python(kReference, {path}));
    RunResult r = run_fusor({"inspect", path, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json::Value got = r.json();
    for (const char* key : {"nodes", "subgraph_nodes", "constant_nodes", "initializer_bytes"})
      EXPECT_EQ(got[key].as_int(), want[key].as_int()) << key;
    ASSERT_EQ(got["ops"].size(), want["ops"].size()) << got["ops"].dump();
    for (const auto& [op, n] : want["ops"].as_object()) {
      ASSERT_TRUE(got["ops"].contains(op)) << op;
      EXPECT_EQ(got["ops"][op].as_int(), n.as_int()) << op;
    }
    ++checked;
  }
  if (checked == 0)
    GTEST_SKIP() << "no test models in " << models_dir() << ": run /usr/bin/python3 scripts/make_test_models.py";
}

}  // namespace
}  // namespace fusor::clitest
