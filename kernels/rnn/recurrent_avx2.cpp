// Recurrent inner loops compiled for avx2 (see recurrent_impl.h).
#define FUSOR_SIMD_NS rnn_avx2
#include "kernels/rnn/recurrent_impl.h"

namespace fusor::rnn_detail {

const RecurrentKernels& recurrent_kernels_avx2() {
  static constexpr RecurrentKernels k = rnn_avx2::recurrent_kernels_for<rnn_avx2::V256>();
  return k;
}

}  // namespace fusor::rnn_detail
