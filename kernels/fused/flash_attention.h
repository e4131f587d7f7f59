// The fast attention core shared by fusor.Attention, fusor.MultiHeadAttention and
// fusor.PackedAttention: Y = Softmax(Q x K^T * scale + Mask) x V for every (batch, head), with Q,
// K, V and Y read and written in place through strides, so head split and merge layouts (a
// [B, S, H * d] projection output, three heads side by side in a fused QKV projection, sequence-
// first exports) cost no copy.
//
// Addressing: the problem has batch x heads independent attentions, n = b * heads + h. For each
// operand, (b, h) starts at data + b * batch + h * head; within it, row i (a query, or a key for K
// and V) is `row` floats after row i - 1 and its head-size columns are contiguous, except K, whose
// element (key j, column c) is at j * key + c * dim (so K given transposed is dim = keys, key = 1).
// The mask, when present, is float (added to the scores) or bool (true: attention allowed); for
// batch n, query i and key j its element is at mask_base[n] + i * mask_row + j * mask_col.
//
// Algorithm (flash attention on the CPU): K is transposed once per (batch, head) into scratch
// panels of 64 keys (skipped when it is given transposed, key = 1); tasks are (batch, head, tile
// of query rows), spread over the pool; each takes its rows a register tile at a time (7 rows on
// AVX-512): their scores against a chunk of up to 512 keys (all of them up to that length) by a
// register-blocked kernel into a small workspace, the chunk's probabilities by a softmax in base 2
// (online across chunks: running max and sum per row, the output rows rescaled when the max
// grows), and P x V for the chunk accumulated in registers into Y's rows. Nothing of size Sq x Sk
// is ever written. causal: query i sees keys j <= i + Sk - Sq only; key blocks past a register
// tile's last visible key are skipped, not computed. A row that sees no key (fully masked) gives 0.
//
// scratch(bytes) supplies 64-byte aligned temporary memory (KernelContext::scratch); the call
// allocates nothing else.
#pragma once
#include <cstdint>
#include <functional>

#include "kernels/cpu_features.h"

namespace fusor {
class ThreadPool;
}

namespace fusor::fused {

struct AttnOperand {
  const float* data = nullptr;
  int64_t batch = 0, head = 0, row = 0;
};

struct AttnProblem {
  int64_t batch = 1, heads = 1, sq = 0, sk = 0, d = 0, dv = 0;
  AttnOperand q, v;
  const float* k = nullptr;
  int64_t k_batch = 0, k_head = 0, k_key = 0, k_dim = 1;
  float* y = nullptr;
  int64_t y_batch = 0, y_head = 0, y_row = 0;
  const float* fmask = nullptr;     // additive mask, or
  const bool* bmask = nullptr;      // allowed-where-true mask, or neither
  const int64_t* mask_base = nullptr;  // batch * heads offsets
  int64_t mask_row = 0, mask_col = 0;
  float scale = 1.0f;  // applied as given (the caller resolves "0 means 1/sqrt(d)")
  bool causal = false;
};

void flash_attention(const AttnProblem& p, ThreadPool& pool, const std::function<void*(size_t)>& scratch, Isa isa);

}  // namespace fusor::fused
