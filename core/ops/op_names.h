// Named op types for code that dispatches on particular ops: `op::Conv`, `fop::FusedConv`
// instead of `OpType::onnx("Conv")` literals, so a misspelt op is a compile error and a search
// for an op's uses finds them all. `op::` is the ONNX domain, `fop::` fusor's own ops (their
// signatures are in fusor_ops.h). Add a name here when code needs it; facts about ops (which are
// commutative, windowed, ...) belong in op_traits.h, not in code testing names.
//
// The constants are inline variables initialized at start-up (OpType interning is thread-safe
// and has no order dependency: the interner is a function-local static).
#pragma once
#include "core/ir/symbol.h"

namespace fusor {

namespace op {
#define FUSOR_ONNX_OP(N) inline const OpType N{"", #N};
FUSOR_ONNX_OP(Abs)
FUSOR_ONNX_OP(Add)
FUSOR_ONNX_OP(And)
FUSOR_ONNX_OP(AveragePool)
FUSOR_ONNX_OP(Bernoulli)
FUSOR_ONNX_OP(BitwiseAnd)
FUSOR_ONNX_OP(BitwiseOr)
FUSOR_ONNX_OP(BitwiseXor)
FUSOR_ONNX_OP(Clip)
FUSOR_ONNX_OP(Concat)
FUSOR_ONNX_OP(ConcatFromSequence)
FUSOR_ONNX_OP(Constant)
FUSOR_ONNX_OP(Conv)
FUSOR_ONNX_OP(ConvTranspose)
FUSOR_ONNX_OP(DequantizeLinear)
FUSOR_ONNX_OP(Dropout)
FUSOR_ONNX_OP(Equal)
FUSOR_ONNX_OP(Gather)
FUSOR_ONNX_OP(Gemm)
FUSOR_ONNX_OP(Identity)
FUSOR_ONNX_OP(If)
FUSOR_ONNX_OP(Loop)
FUSOR_ONNX_OP(LpPool)
FUSOR_ONNX_OP(MatMul)
FUSOR_ONNX_OP(Max)
FUSOR_ONNX_OP(MaxPool)
FUSOR_ONNX_OP(Mean)
FUSOR_ONNX_OP(Min)
FUSOR_ONNX_OP(Mul)
FUSOR_ONNX_OP(Multinomial)
FUSOR_ONNX_OP(Optional)
FUSOR_ONNX_OP(OptionalGetElement)
FUSOR_ONNX_OP(OptionalHasElement)
FUSOR_ONNX_OP(Or)
FUSOR_ONNX_OP(QuantizeLinear)
FUSOR_ONNX_OP(RandomNormal)
FUSOR_ONNX_OP(RandomNormalLike)
FUSOR_ONNX_OP(RandomUniform)
FUSOR_ONNX_OP(RandomUniformLike)
FUSOR_ONNX_OP(ReduceL1)
FUSOR_ONNX_OP(ReduceL2)
FUSOR_ONNX_OP(ReduceLogSum)
FUSOR_ONNX_OP(ReduceLogSumExp)
FUSOR_ONNX_OP(ReduceMax)
FUSOR_ONNX_OP(ReduceMean)
FUSOR_ONNX_OP(ReduceMin)
FUSOR_ONNX_OP(ReduceProd)
FUSOR_ONNX_OP(ReduceSum)
FUSOR_ONNX_OP(ReduceSumSquare)
FUSOR_ONNX_OP(Reshape)
FUSOR_ONNX_OP(SequenceAt)
FUSOR_ONNX_OP(SequenceConstruct)
FUSOR_ONNX_OP(SequenceEmpty)
FUSOR_ONNX_OP(SequenceErase)
FUSOR_ONNX_OP(SequenceInsert)
FUSOR_ONNX_OP(SequenceLength)
FUSOR_ONNX_OP(SequenceMap)
FUSOR_ONNX_OP(Shape)
FUSOR_ONNX_OP(Size)
FUSOR_ONNX_OP(Slice)
FUSOR_ONNX_OP(Split)
FUSOR_ONNX_OP(SplitToSequence)
FUSOR_ONNX_OP(Squeeze)
FUSOR_ONNX_OP(Sum)
FUSOR_ONNX_OP(Transpose)
FUSOR_ONNX_OP(Unsqueeze)
FUSOR_ONNX_OP(Xor)
#undef FUSOR_ONNX_OP
}  // namespace op

namespace fop {
#define FUSOR_OWN_OP(N) inline const OpType N{kFusorDomain, #N};
FUSOR_OWN_OP(Attention)
FUSOR_OWN_OP(BiasGelu)
FUSOR_OWN_OP(FusedConv)
FUSOR_OWN_OP(FusedGemm)
FUSOR_OWN_OP(FusedMatMul)
FUSOR_OWN_OP(Gelu)
FUSOR_OWN_OP(LayerNorm)
FUSOR_OWN_OP(NchwcAveragePool)
FUSOR_OWN_OP(NchwcConv)
FUSOR_OWN_OP(NchwcMaxPool)
FUSOR_OWN_OP(NhwcAveragePool)
FUSOR_OWN_OP(NhwcConv)
FUSOR_OWN_OP(NhwcConvTranspose)
FUSOR_OWN_OP(NhwcGlobalAveragePool)
FUSOR_OWN_OP(NhwcGlobalMaxPool)
FUSOR_OWN_OP(NhwcMaxPool)
FUSOR_OWN_OP(QuickGelu)
FUSOR_OWN_OP(RMSNorm)
FUSOR_OWN_OP(Silu)
FUSOR_OWN_OP(SkipLayerNorm)
FUSOR_OWN_OP(WinogradConv)
FUSOR_OWN_OP(WinogradFilter)
#undef FUSOR_OWN_OP
}  // namespace fop

}  // namespace fusor
