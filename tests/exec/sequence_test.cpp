// Sequence and optional values through the executor and the reference kernels: graphs built
// with the IR, run, and their results compared with the same numbers computed from the input.
// The ONNX node tests (conformance) check the ops against ONNX's data; these check the parts
// those tests do not reach (erase, split/concat, errors, what the plan refuses).
#include <gtest/gtest.h>

#include "core/util/error.h"
#include "engine/exec/executor.h"

namespace fusor {
namespace {

using Outs = std::vector<ValueId>;

ValueType float_tensor(Shape s) { return ValueType::tensor(DataType::Float, s); }
ValueType float_seq() { return ValueType::sequence(ValueType::tensor(DataType::Float)); }

Tensor iota(Shape s) {
  Tensor t(DataType::Float, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

ValueId int_const(Graph& g, const std::string& name, int64_t v) { return g.add_initializer(name, Tensor::scalar<int64_t>(v)); }

// x float[N,3] (N = 4) -> SplitToSequence(axis 0, keepdims 0): 4 rows of [3]
//   -> SequenceErase(position 0) -> SequenceInsert(row 3 again, position 1) -> items r1, r3, r2, r3
//   -> ConcatFromSequence(axis 0, new_axis 1) y[4,3], SequenceLength n, SequenceAt(-1) last,
//   and the sequence itself as an output.
struct Pipeline {
  Graph g;
  Pipeline() {
    ValueType xt = ValueType::tensor(DataType::Float);
    xt.has_shape = true;
    xt.dims = {Dim::symbol("N"), Dim::known(3)};
    ValueId x = g.add_value("x", xt);
    g.add_input(x);
    ValueId rows = g.add_value("rows", float_seq());
    g.add_node(OpType::onnx("SplitToSequence"), {x}, Outs{rows},
               {Attribute::make_int("axis", 0), Attribute::make_int("keepdims", 0)}, "split");
    ValueId erased = g.add_value("erased", float_seq());
    g.add_node(OpType::onnx("SequenceErase"), {rows, int_const(g, "zero", 0)}, Outs{erased}, {}, "erase");
    ValueId row3 = g.add_value("row3", ValueType::tensor(DataType::Float));
    g.add_node(OpType::onnx("SequenceAt"), {rows, int_const(g, "three", 3)}, Outs{row3}, {}, "at3");
    ValueId seq = g.add_value("seq", float_seq());
    g.add_node(OpType::onnx("SequenceInsert"), {erased, row3, int_const(g, "one", 1)}, Outs{seq}, {}, "insert");
    ValueId y = g.add_value("y", ValueType::tensor(DataType::Float));
    g.add_node(OpType::onnx("ConcatFromSequence"), {seq}, Outs{y},
               {Attribute::make_int("axis", 0), Attribute::make_int("new_axis", 1)}, "concat");
    ValueId n = g.add_value("n", ValueType::tensor(DataType::Int64, {}));
    g.add_node(OpType::onnx("SequenceLength"), {seq}, Outs{n}, {}, "len");
    ValueId last = g.add_value("last", ValueType::tensor(DataType::Float));
    g.add_node(OpType::onnx("SequenceAt"), {seq, int_const(g, "minus_one", -1)}, Outs{last}, {}, "at_last");
    g.add_output(y);
    g.add_output(n);
    g.add_output(last);
    g.add_output(seq);
    g.verify();
  }
};

TEST(Sequences, SplitEraseInsertConcat) {
  Pipeline p;
  Executor ex(p.g, {{"", 17}});
  Tensor x = iota({4, 3});
  for (int run = 0; run < 2; ++run) {  // the second run reuses the plan's memory
    auto out = ex.run(NamedTensors{{"x", x}});
    ASSERT_EQ(out.size(), 4u);
    const int order[4] = {1, 3, 2, 3};
    ASSERT_EQ(out[0].shape(), (Shape{4, 3}));
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(out[0].data<float>()[r * 3 + c], x.data<float>()[order[r] * 3 + c]);
    EXPECT_EQ(*out[1].data<int64_t>(), 4);
    ASSERT_EQ(out[2].shape(), (Shape{3}));
    for (int c = 0; c < 3; ++c) EXPECT_EQ(out[2].data<float>()[c], x.data<float>()[9 + c]);
    ASSERT_TRUE(out[3].is_sequence());
    EXPECT_EQ(out[3].sequence_elem(), DataType::Float);
    ASSERT_EQ(out[3].items().size(), 4u);
    for (int r = 0; r < 4; ++r) {
      ASSERT_EQ(out[3].items()[r].shape(), (Shape{3}));
      EXPECT_EQ(out[3].items()[r].data<float>()[0], x.data<float>()[order[r] * 3]);
    }
  }
}

TEST(Sequences, SplitToSequenceWithLengthsAndConcatAlongAnAxis) {
  Graph g;
  ValueId x = g.add_value("x", float_tensor({2, 5}));
  g.add_input(x);
  ValueId parts = g.add_value("parts", float_seq());
  g.add_node(OpType::onnx("SplitToSequence"), {x, g.add_initializer("split", Tensor::scalar<int64_t>(2))}, Outs{parts},
             {Attribute::make_int("axis", 1)}, "split");
  ValueId y = g.add_value("y", ValueType::tensor(DataType::Float));
  g.add_node(OpType::onnx("ConcatFromSequence"), {parts}, Outs{y}, {Attribute::make_int("axis", -1)}, "concat");
  g.add_output(parts);
  g.add_output(y);
  Executor ex(g, {{"", 17}});
  Tensor xv = iota({2, 5});
  auto out = ex.run(NamedTensors{{"x", xv}});
  ASSERT_EQ(out[0].items().size(), 3u);  // lengths 2, 2, 1
  EXPECT_EQ(out[0].items()[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(out[0].items()[2].shape(), (Shape{2, 1}));
  EXPECT_EQ(out[0].items()[2].data<float>()[1], xv.data<float>()[9]);
  EXPECT_TRUE(out[1].bit_equal(xv));
}

// The position of SequenceAt out of range: BadInput naming the node and op, and the range.
TEST(Sequences, OutOfRangePositionIsBadInputNamingTheNode) {
  Pipeline p;
  Executor ex(p.g, {{"", 17}});
  try {
    ex.run(NamedTensors{{"x", iota({3, 3})}});  // 3 rows: position 3 is out of range
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    std::string m = e.what();
    EXPECT_NE(m.find("node 'at3' (SequenceAt)"), std::string::npos) << m;
    EXPECT_NE(m.find("position 3 is out of range for a sequence of 3 tensors"), std::string::npos) << m;
  }
}

// Optional without an input is empty: OptionalHasElement says false, OptionalGetElement fails
// naming its node; with an input, the element comes back.
TEST(Optionals, EmptyAndPresent) {
  for (bool present : {false, true}) {
    Graph g;
    ValueId x = g.add_value("x", float_tensor({2}));
    g.add_input(x);
    ValueId opt = g.add_value("opt", ValueType::optional(ValueType::tensor(DataType::Float)));
    g.add_node(OpType::onnx("Optional"), present ? std::vector<ValueId>{x} : std::vector<ValueId>{}, Outs{opt}, {}, "make");
    ValueId has = g.add_value("has", ValueType::tensor(DataType::Bool, {}));
    g.add_node(OpType::onnx("OptionalHasElement"), {opt}, Outs{has}, {}, "has");
    ValueId el = g.add_value("el", ValueType::tensor(DataType::Float));
    g.add_node(OpType::onnx("OptionalGetElement"), {opt}, Outs{el}, {}, "get");
    g.add_output(has);
    g.add_output(el);
    Executor ex(g, {{"", 17}});
    Tensor xv = iota({2});
    if (present) {
      auto out = ex.run(NamedTensors{{"x", xv}});
      EXPECT_TRUE(*out[0].data<bool>());
      EXPECT_TRUE(out[1].bit_equal(xv));
      continue;
    }
    try {
      ex.run(NamedTensors{{"x", xv}});
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      std::string m = e.what();
      EXPECT_NE(m.find("node 'get' (OptionalGetElement)"), std::string::npos) << m;
      EXPECT_NE(m.find("empty"), std::string::npos) << m;
    }
  }
}

// A sequence graph input takes a sequence value and refuses a tensor; a tensor op given a sequence
// is refused when planning, naming the node.
TEST(Sequences, InputsAndPlanAreChecked) {
  Graph g;
  ValueId s = g.add_value("s", float_seq());
  g.add_input(s);
  ValueId n = g.add_value("n", ValueType::tensor(DataType::Int64, {}));
  g.add_node(OpType::onnx("SequenceLength"), {s}, Outs{n}, {}, "len");
  g.add_output(n);
  Executor ex(g, {{"", 17}});
  auto out = ex.run(NamedTensors{{"s", Tensor::sequence(DataType::Float, {iota({1}), iota({2})})}});
  EXPECT_EQ(*out[0].data<int64_t>(), 2);
  EXPECT_THROW(ex.run(NamedTensors{{"s", iota({2})}}), Error);
  try {
    ex.run(NamedTensors{{"s", Tensor::sequence(DataType::Int64, {Tensor::scalar<int64_t>(1)})}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 's'"), std::string::npos) << e.what();
  }

  Graph bad;
  ValueId bs = bad.add_value("s", float_seq());
  bad.add_input(bs);
  ValueId r = bad.add_value("r", ValueType::tensor(DataType::Float));
  bad.add_node(OpType::onnx("Relu"), {bs}, Outs{r}, {}, "relu");
  bad.add_output(r);
  try {
    Executor plan(bad, {{"", 17}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("node 'relu' (Relu): input 's' is a seq(float[?])"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fusor
