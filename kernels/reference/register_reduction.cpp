// The reduction family of register.h: Reduce*, ArgMax/ArgMin, CumSum, TopK, and the
// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss reductions.
#include "kernels/reference/families.h"
#include "kernels/register.h"

namespace fusor {

void register_reduction_kernels(KernelRegistry& r) {
  register_reduce_kernels(r);
  register_argminmax_kernels(r);
  register_cumsum_kernels(r);
  register_topk_kernels(r);
  register_loss_kernels(r);
}

}  // namespace fusor
