// Registration entry points of the reference kernel files (internal to kernels/reference).
// The family functions of kernels/register.h call these.
#pragma once

namespace fusor {
class KernelRegistry;
void register_unary_kernels(KernelRegistry& r);
void register_binary_arith_kernels(KernelRegistry& r);
void register_logic_kernels(KernelRegistry& r);
void register_variadic_kernels(KernelRegistry& r);
void register_cast_kernels(KernelRegistry& r);

void register_reduce_kernels(KernelRegistry& r);
void register_argminmax_kernels(KernelRegistry& r);
void register_cumsum_kernels(KernelRegistry& r);
void register_topk_kernels(KernelRegistry& r);

void register_view_kernels(KernelRegistry& r);
void register_transpose_kernels(KernelRegistry& r);
void register_concat_split_kernels(KernelRegistry& r);
void register_slice_kernels(KernelRegistry& r);
void register_gather_kernels(KernelRegistry& r);
void register_scatter_kernels(KernelRegistry& r);
void register_expand_tile_kernels(KernelRegistry& r);
void register_pad_kernels(KernelRegistry& r);
void register_resize_kernels(KernelRegistry& r);
void register_shape_kernels(KernelRegistry& r);
void register_constant_kernels(KernelRegistry& r);
void register_index_kernels(KernelRegistry& r);
void register_layout_kernels(KernelRegistry& r);
void register_window_kernels(KernelRegistry& r);
void register_nms_kernels(KernelRegistry& r);
void register_loss_kernels(KernelRegistry& r);
void register_grid_sample_kernels(KernelRegistry& r);
void register_text_kernels(KernelRegistry& r);
void register_signal_kernels(KernelRegistry& r);
void register_optimizer_kernels(KernelRegistry& r);
}  // namespace fusor
