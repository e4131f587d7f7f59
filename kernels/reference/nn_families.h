// Per-file registration functions of the reference NN, RNN and misc kernels. register_nn_kernels,
// register_rnn_kernels and register_misc_kernels (kernels/register.h) call these.
#pragma once

namespace fusor {
class KernelRegistry;
void register_nn_matmul_kernels(KernelRegistry& r);     // MatMul, Gemm
void register_nn_conv_kernels(KernelRegistry& r);       // Conv, ConvTranspose
void register_nn_pool_kernels(KernelRegistry& r);       // MaxPool, AveragePool, LpPool, Global*
void register_nn_norm_kernels(KernelRegistry& r);       // BatchNorm, InstanceNorm, LayerNorm, LRN, MVN
void register_nn_softmax_kernels(KernelRegistry& r);    // Softmax, LogSoftmax, Hardmax
void register_nn_unpool_roialign_kernels(KernelRegistry& r);  // MaxUnpool, RoiAlign
void register_misc_quant_kernels(KernelRegistry& r);    // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
void register_misc_integer_kernels(KernelRegistry& r);  // MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv
void register_misc_einsum_kernels(KernelRegistry& r);   // Einsum
void register_misc_det_kernels(KernelRegistry& r);      // Det
void register_misc_random_kernels(KernelRegistry& r);   // RandomUniform(Like), RandomNormal(Like), Bernoulli
}  // namespace fusor
