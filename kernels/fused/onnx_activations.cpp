// Fast kernels of ONNX's activation ops that a graph keeps standalone (a Sigmoid on a detector's
// output map, a Tanh or HardSwish no conv or GEMM absorbed): Sigmoid, Tanh, HardSigmoid,
// HardSwish and LeakyRelu computed by the GEMM core's vectorized epilogue
// (kernels/gemm/gemm.h apply_epilogue, the same code as a fused conv's or MatMul's activation:
// exp-based, relative error ~1e-6 against std::exp and std::tanh) instead of the reference's scalar
// library calls. One pass in L1-sized chunks (copy, then the activation in place), threaded over
// chunks by cost. float32; other types, and Relu/Clip (already vectorized loops in the
// reference), go to the reference kernel.
#include <algorithm>
#include <cstring>
#include <optional>

#include "kernels/fused/common.h"
#include "kernels/gemm/activation_onnx.h"

namespace fusor::fused {
namespace {

class FastOnnxActivation : public FastFusedKernel {
 public:
  explicit FastOnnxActivation(const KernelInfo& info) : FastFusedKernel(info), act_(activation_of_node(info.n())) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (!act_ || x.dtype() != DataType::Float) return fallback_->compute(ctx);
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    const int64_t n = x.numel();
    const float* px = x.data<float>();
    float* py = y.data<float>();
    Epilogue ep;
    ep.act = *act_;
    constexpr int64_t kChunk = 4096;  // floats: 16 KiB, in L1 between the copy and the pass
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    // ~0.4 ns per element for the exp-based activations on one core.
    ctx.threads().parallel_for_cost(chunks, 0.4 * kChunk, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t off = c * kChunk, len = std::min(kChunk, n - off);
        if (py != px) std::memcpy(py + off, px + off, static_cast<size_t>(len) * sizeof(float));
        apply_epilogue(py + off, len, 1, len, ep);
      }
    });
  }

  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

 private:
  std::optional<ActivationSpec> act_;
};

}  // namespace

void register_onnx_activation_kernels(KernelRegistry& r) {
  for (const char* op : {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "LeakyRelu"})
    r.add("", op, "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
      if (known_not_float(info, 0) || !activation_of_node(info.n())) return make_reference(info);
      return std::make_unique<FastOnnxActivation>(info);
    });
}

}  // namespace fusor::fused
