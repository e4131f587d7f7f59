// Byte tensors between NCHW and NHWC (the QConv kernel's conversion around the NHWC core when the
// layout rules have not made the graph NHWC): (N, C, S) <-> (N, S, C) for S spatial elements.
#pragma once
#include <cstdint>

namespace fusor {
class ThreadPool;
namespace int8 {

void nchw_to_nhwc_u8(const uint8_t* x, int64_t n, int64_t c, int64_t spatial, uint8_t* y, ThreadPool* pool);
void nhwc_to_nchw_u8(const uint8_t* x, int64_t n, int64_t c, int64_t spatial, uint8_t* y, ThreadPool* pool);

}  // namespace int8
}  // namespace fusor
