// A model with sequences and an optional through `fusor run` and `fusor optimize`: the outputs
// (a SequenceProto among them) against numpy's slicing of the same input, the optimized model
// valid for onnx.checker with its sequence types kept, and running it gives the same outputs.
#include <gtest/gtest.h>

#include "tests/cli/cli_harness.h"

namespace fusor::clitest {
namespace {

// x float[4,3] -> Relu -> SplitToSequence(split [1,3], axis 0) -> seq (an output)
//   SequenceAt(seq, 1) * 2 -> y;  Optional(y) -> OptionalGetElement -> Identity -> z
//   ConcatFromSequence(seq, axis 0) -> Relu -> w
const char* kMakeModel = R"(
import sys, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
d = sys.argv[1]
seq_t = h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, [None, 3]))
nodes = [
  h.make_node('Relu', ['x'], ['r'], name='relu'),
  h.make_node('SplitToSequence', ['r', 'split'], ['seq'], name='split', axis=0),
  h.make_node('SequenceAt', ['seq', 'one'], ['t'], name='at'),
  h.make_node('Mul', ['t', 'two'], ['y'], name='mul'),
  h.make_node('Optional', ['y'], ['opt'], name='opt'),
  h.make_node('OptionalGetElement', ['opt'], ['g'], name='get'),
  h.make_node('Identity', ['g'], ['z'], name='id'),
  h.make_node('ConcatFromSequence', ['seq'], ['c'], name='concat', axis=0),
  h.make_node('Relu', ['c'], ['w'], name='relu2'),
]
g = h.make_graph(nodes, 'seq_model',
    [h.make_tensor_value_info('x', T.FLOAT, [4, 3])],
    [h.make_value_info('seq', seq_t), h.make_tensor_value_info('y', T.FLOAT, [3, 3]),
     h.make_tensor_value_info('z', T.FLOAT, [3, 3]), h.make_tensor_value_info('w', T.FLOAT, [4, 3])],
    [nh.from_array(np.array([1, 3], np.int64), 'split'), nh.from_array(np.array(1, np.int64), 'one'),
     nh.from_array(np.array(2, np.float32), 'two')])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, d + '/seq.onnx')
x = np.random.default_rng(7).standard_normal((4, 3)).astype(np.float32)
open(d + '/x.pb', 'wb').write(nh.from_array(x, 'x').SerializeToString())
)";

// Checks DIR/output_*.pb against numpy on x.pb; prints "ok".
const char* kCheckOutputs = R"(
import sys, numpy as np, onnx
from onnx import numpy_helper as nh
d, out = sys.argv[1], sys.argv[2]
x = nh.to_array(onnx.load_tensor(d + '/x.pb'))
r = np.maximum(x, 0)
sp = onnx.SequenceProto()
sp.ParseFromString(open(out + '/output_0.pb', 'rb').read())
items = nh.to_list(sp)
assert len(items) == 2, len(items)
assert np.array_equal(items[0], r[0:1]) and np.array_equal(items[1], r[1:4])
y = nh.to_array(onnx.load_tensor(out + '/output_1.pb'))
z = nh.to_array(onnx.load_tensor(out + '/output_2.pb'))
w = nh.to_array(onnx.load_tensor(out + '/output_3.pb'))
assert np.allclose(y, r[1:4] * 2) and np.array_equal(z, y) and np.array_equal(w, r)
print('ok')
)";

TEST(SequenceModel, RunsAndOptimizesToAValidModel) {
  TempDir dir;
  run_python(kMakeModel, {dir.dir()});
  RunResult r = run_fusor({"run", dir.path("seq.onnx"), "--input", "x=" + dir.path("x.pb"), "--output-dir", dir.path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("seq  sequence of 2 float tensors"), std::string::npos) << r.out;
  EXPECT_EQ(run_python(kCheckOutputs, {dir.dir(), dir.path("out")}), "ok\n");

  for (const char* level : {"basic", "all"}) {
    std::string opt = dir.path(std::string("opt_") + level + ".onnx");
    RunResult o = run_fusor({"optimize", dir.path("seq.onnx"), "-o", opt, "--level", level});
    ASSERT_EQ(o.exit_code, 0) << level << ": " << o.err;
    std::string types = run_python(
        "import sys, onnx\nm = onnx.load(sys.argv[1])\nonnx.checker.check_model(m)\n"
        "ops = {'SplitToSequence', 'SequenceAt', 'Optional', 'OptionalGetElement', 'ConcatFromSequence'}\n"
        "print(m.graph.output[0].type.WhichOneof('value'), len([n for n in m.graph.node if n.op_type in ops]))",
        {opt});
    EXPECT_EQ(types, "sequence_type 5\n") << level;  // the sequence ops stay, the output stays a sequence
    RunResult again = run_fusor({"run", opt, "--input", "x=" + dir.path("x.pb"), "--output-dir", dir.path(level)});
    ASSERT_EQ(again.exit_code, 0) << level << ": " << again.err;
    EXPECT_EQ(run_python(kCheckOutputs, {dir.dir(), dir.path(level)}), "ok\n") << level;
  }
}

// An out-of-range SequenceAt in a model: exit 2 and a message naming the node and op.
TEST(SequenceModel, OutOfRangeIsExit2NamingTheNode) {
  TempDir dir;
  run_python(std::string(kMakeModel) + "\nm.graph.initializer[1].CopyFrom(nh.from_array(np.array(5, np.int64), 'one'))\n"
                                       "onnx.save(m, d + '/bad.onnx')\n",
             {dir.dir()});
  RunResult r = run_fusor({"run", dir.path("bad.onnx"), "--input", "x=" + dir.path("x.pb")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("node 'at' (SequenceAt): position 5 is out of range for a sequence of 2 tensors"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace fusor::clitest
