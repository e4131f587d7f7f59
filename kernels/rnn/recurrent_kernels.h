// Internal: the inner loops of the fast LSTM / GRU / RNN kernel (kernels/rnn/recurrent.cpp),
// compiled once per ISA (recurrent_<isa>.cpp) from recurrent_impl.h.
//
// gemv_acc is the recurrent product of one time step: a few rows of state times the prepacked
// Rᵀ (K x N, row-major), added into the gate rows. The gate functions apply one cell's equations
// to one batch row, vectorized over the hidden units, with the default activations (sigmoid for
// the gates, tanh for the candidate and the output) and an optional clip (0: none) of every
// pre-activation, as the ONNX operators define them.
#pragma once
#include <cstdint>

#include "kernels/cpu_features.h"

namespace fusor::rnn_detail {

struct RecurrentKernels {
  // c[r][0..N) += sum_k a[r][k] * bt[k][0..N) for r < rows.
  void (*gemv_acc)(int64_t rows, int64_t K, int64_t N, const float* a, int64_t lda, const float* bt, int64_t ldb,
                   float* c, int64_t ldc);
  // LSTM, gate order i, o, f, c in g (4H pre-activations, clobbered). Updates c and writes h.
  // p: peepholes i, o, f (3H) or null. input_forget: f = 1 - i.
  void (*lstm_row)(int64_t H, float* g, float* c, float* h, const float* p, float clip, bool input_forget);
  // GRU, first half: g[0..2H) = sigmoid(clip(z, r pre-activations)); rh (when not null) = r * h.
  void (*gru_zr)(int64_t H, float* g, const float* h, float* rh, float clip);
  // GRU, second half: n = tanh(clip(xh ? xh + r * g[2H..3H) : g[2H..3H))); h = (1 - z) n + z h.
  void (*gru_out)(int64_t H, const float* g, const float* xh, float* h, float clip);
  // RNN: h = tanh(clip(g)).
  void (*rnn_row)(int64_t H, const float* g, float* h, float clip);
};

const RecurrentKernels& recurrent_kernels(Isa isa);
const RecurrentKernels& recurrent_kernels_avx512();
const RecurrentKernels& recurrent_kernels_avx2();
const RecurrentKernels& recurrent_kernels_scalar();

}  // namespace fusor::rnn_detail
