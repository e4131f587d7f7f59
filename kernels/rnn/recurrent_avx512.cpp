// Recurrent inner loops compiled for avx512 (see recurrent_impl.h).
#define FUSOR_SIMD_NS rnn_avx512
#include "kernels/rnn/recurrent_impl.h"

namespace fusor::rnn_detail {

const RecurrentKernels& recurrent_kernels_avx512() {
  static constexpr RecurrentKernels k = rnn_avx512::recurrent_kernels_for<rnn_avx512::V512>();
  return k;
}

}  // namespace fusor::rnn_detail
