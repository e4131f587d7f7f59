// One registration function per kernel family; KernelRegistry::global() calls each once.
// Add a family: declare its function here and call it in registry.cpp.
#pragma once

namespace fusor {
class KernelRegistry;
void register_elementwise_kernels(KernelRegistry& r);
void register_reduction_kernels(KernelRegistry& r);
void register_tensor_kernels(KernelRegistry& r);   // shape/layout/indexing ops
void register_nn_kernels(KernelRegistry& r);       // conv, pool, norm, matmul, softmax
void register_rnn_kernels(KernelRegistry& r);
void register_control_flow_kernels(KernelRegistry& r);
void register_sequence_kernels(KernelRegistry& r);   // sequence and optional ops
void register_misc_kernels(KernelRegistry& r);     // quantization, einsum, ...
void register_fused_kernels(KernelRegistry& r);    // the fusor domain
void register_fast_kernels(KernelRegistry& r);     // GEMM/conv fast paths (priority > reference)
void register_fast_pool_kernels(KernelRegistry& r);  // 2-D MaxPool/AveragePool, NCHW and NHWC
void register_fast_conv_transpose_kernels(KernelRegistry& r);  // 2-D ConvTranspose on the GEMM core
void register_fast_rnn_kernels(KernelRegistry& r);  // LSTM/GRU/RNN: one input GEMM, prepacked Rᵀ per step (kernels/rnn)
void register_fast_rowwise_kernels(KernelRegistry& r);  // ReduceSum/ReduceMean over trailing axes, Softmax (kernels/rowwise)
void register_nchwc_kernels(KernelRegistry& r);    // the blocked layout's ops (kernels/nchwc)
void register_xnnpack_kernels(KernelRegistry& r);  // "xnnpack" impls (kernels/xnnpack), when built with XNNPACK
void register_int8_kernels(KernelRegistry& r);     // the quantized fusor ops, fast Q/DQ (kernels/int8)
}  // namespace fusor
