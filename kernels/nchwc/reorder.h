// Conversions between NCHW and the blocked layout (kernels/nchwc/nchwc_format.h): the kernels of
// fusor.ReorderToNchwc / fusor.ReorderFromNchwc, and helpers for kernels that take or give NCHW at
// an edge (a Winograd or int8 kernel may call them on its own scratch).
//
// to_nchwc writes zeros into the padding lanes; from_nchwc ignores them. Both split the work over
// `pool` (channel blocks x rows) when it is given; null runs on the calling thread. Both move
// 4 lanes x 4 pixels at a time (kernels/common/transpose_tile.h) where the lanes and pixels
// allow, the rest one by one: copies, so the same bits either way.
#pragma once
#include "kernels/nchwc/nchwc_format.h"

namespace fusor {

class ThreadPool;

// x: NCHW [s.n, s.c, s.h, s.w] -> y: blocked [s.n, s.cb(), s.h, s.w, s.block].
void reorder_to_nchwc(const float* x, const NchwcShape& s, float* y, ThreadPool* pool = nullptr);
// x: blocked -> y: NCHW (padding lanes dropped).
void reorder_from_nchwc(const float* x, const NchwcShape& s, float* y, ThreadPool* pool = nullptr);

}  // namespace fusor
