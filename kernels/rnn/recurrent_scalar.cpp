// Recurrent inner loops compiled for scalar (see recurrent_impl.h).
#define FUSOR_SIMD_NS rnn_scalar
#include "kernels/rnn/recurrent_impl.h"

namespace fusor::rnn_detail {

const RecurrentKernels& recurrent_kernels_scalar() {
  static constexpr RecurrentKernels k = rnn_scalar::recurrent_kernels_for<rnn_scalar::V1>();
  return k;
}

}  // namespace fusor::rnn_detail
