// The tensor family of register.h: shape, layout and indexing reference kernels, plus window
// generators, NonMaxSuppression, GridSample, the text ops
// and the signal ops (DFT, STFT, MelWeightMatrix).
#include "kernels/reference/families.h"
#include "kernels/register.h"

namespace fusor {

void register_tensor_kernels(KernelRegistry& r) {
  register_view_kernels(r);
  register_transpose_kernels(r);
  register_concat_split_kernels(r);
  register_slice_kernels(r);
  register_gather_kernels(r);
  register_scatter_kernels(r);
  register_expand_tile_kernels(r);
  register_pad_kernels(r);
  register_resize_kernels(r);
  register_shape_kernels(r);
  register_constant_kernels(r);
  register_index_kernels(r);
  register_layout_kernels(r);
  register_window_kernels(r);
  register_nms_kernels(r);
  register_grid_sample_kernels(r);
  register_text_kernels(r);
  register_signal_kernels(r);
}

}  // namespace fusor
