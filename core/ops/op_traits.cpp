#include "core/ops/op_traits.h"

#include <vector>

#include "core/ops/op_names.h"

namespace fusor {
namespace {

struct Entry {
  OpType op;
  OpTraits traits;
};

// The clip bounds and axes inputs, with the opset where ONNX turned each attribute into an input.
const std::vector<LiftedInput> kClipBounds = {{1, "min", 11}, {2, "max", 11}};
const std::vector<LiftedInput> kAxes13 = {{1, "axes", 13}};
const std::vector<LiftedInput> kAxes18 = {{1, "axes", 18}};

std::vector<Entry> entries() {
  const OpTraits commutative{.commutative = true};
  const OpTraits nary{.commutative = true, .nary_set = true};
  const OpTraits windowed{.windowed = true};
  const OpTraits random{.deterministic = false};
  const OpTraits axes13{.lifted = kAxes13};
  const OpTraits axes18{.lifted = kAxes18};
  const OpTraits seq{.non_tensor_values = true};
  return {
      // Commutative binary ops, and the variadic ones whose inputs form a set.
      {op::Add, commutative},
      {op::Mul, commutative},
      {op::Equal, commutative},
      {op::And, commutative},
      {op::Or, commutative},
      {op::Xor, commutative},
      {op::BitwiseAnd, commutative},
      {op::BitwiseOr, commutative},
      {op::BitwiseXor, commutative},
      {op::Max, nary},
      {op::Min, nary},
      {op::Sum, nary},
      {op::Mean, nary},
      // Windowed ops.
      {op::Conv, windowed},
      {op::ConvTranspose, windowed},
      {op::AveragePool, windowed},
      {op::MaxPool, windowed},
      {op::LpPool, windowed},
      {fop::FusedConv, windowed},
      {fop::NhwcConv, windowed},
      {fop::NhwcConvTranspose, windowed},
      {fop::NhwcMaxPool, windowed},
      {fop::NhwcAveragePool, windowed},
      {fop::NchwcConv, windowed},
      {fop::NchwcMaxPool, windowed},
      {fop::NchwcAveragePool, windowed},
      {fop::WinogradConv, windowed},
      // Weight transforms that may grow their constant input when folded.
      {fop::WinogradFilter, {.fold_growth = 4}},
      // Random ops.
      {op::RandomNormal, random},
      {op::RandomUniform, random},
      {op::RandomNormalLike, random},
      {op::RandomUniformLike, random},
      {op::Multinomial, random},
      {op::Bernoulli, random},
      // Dropout draws in training mode (an input known at run time); at inference a rule removes it.
      {op::Dropout, random},
      // Inputs the normal form holds as attributes.
      {op::Clip, {.bounds_as_params = true, .lifted = kClipBounds}},
      {op::Squeeze, axes13},
      {op::Unsqueeze, {.axes_of_output = true, .lifted = kAxes13}},
      {op::ReduceSum, axes13},
      {op::ReduceMean, axes18},
      {op::ReduceMax, axes18},
      {op::ReduceMin, axes18},
      {op::ReduceProd, axes18},
      {op::ReduceL1, axes18},
      {op::ReduceL2, axes18},
      {op::ReduceLogSum, axes18},
      {op::ReduceLogSumExp, axes18},
      {op::ReduceSumSquare, axes18},
      // Sequence and optional ops.
      {op::SequenceConstruct, seq},
      {op::SequenceEmpty, seq},
      {op::SequenceInsert, seq},
      {op::SequenceAt, seq},
      {op::SequenceErase, seq},
      {op::SequenceLength, seq},
      {op::SplitToSequence, seq},
      {op::ConcatFromSequence, seq},
      {op::SequenceMap, seq},
      {op::Optional, seq},
      {op::OptionalHasElement, seq},
      {op::OptionalGetElement, seq},
  };
}

}  // namespace

const OpTraits& op_traits(OpType op) {
  // Indexed by the interned op id (small and dense): the matcher asks for every node it tries.
  static const std::vector<OpTraits> table = [] {
    std::vector<OpTraits> t;
    for (auto& e : entries()) {
      if (e.op.id() >= t.size()) t.resize(e.op.id() + 1);
      t[e.op.id()] = std::move(e.traits);
    }
    return t;
  }();
  static const OpTraits defaults;
  return op.id() < table.size() ? table[op.id()] : defaults;
}

std::optional<std::string> lifted_input_attr(OpType op, size_t slot) {
  for (const LiftedInput& l : op_traits(op).lifted)
    if (l.slot == slot) return std::string(l.attr);
  return std::nullopt;
}

bool lifted_as_input(OpType op, const std::string& attr, int64_t opset) {
  for (const LiftedInput& l : op_traits(op).lifted)
    if (attr == l.attr) return opset >= l.input_since;
  return false;
}

}  // namespace fusor
