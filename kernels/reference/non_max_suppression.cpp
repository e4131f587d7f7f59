// NonMaxSuppression reference kernel: per batch and class, greedy selection by descending score
// (ties: lower box index first), dropping boxes whose IoU with a selected box exceeds
// iou_threshold and boxes scoring at or below score_threshold.
#include <algorithm>
#include <numeric>

#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

class NonMaxSuppressionKernel : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(const KernelInfo& info) : center_(info.n().attr_int("center_point_box", 0) != 0) {}
  void compute(KernelContext& ctx) override {
    const Tensor& boxes = required_input(ctx, 0);
    const Tensor& scores = required_input(ctx, 1);
    const std::string w = ctx.where();
    if (boxes.rank() != 3 || boxes.dim(2) != 4 || scores.rank() != 3 || scores.dim(0) != boxes.dim(0) ||
        scores.dim(2) != boxes.dim(1))
      throw_bad_input(w + ": boxes must be [B, N, 4] and scores [B, C, N]");
    int64_t max_out = 0;
    if (const Tensor* m = optional_input(ctx, 2); m && m->numel()) max_out = m->as_int64(0);
    double iou_thr = 0;
    if (const Tensor* t = optional_input(ctx, 3); t && t->numel()) iou_thr = t->as_double(0);
    const Tensor* st = optional_input(ctx, 4);
    const bool use_score = st && st->numel();
    const double score_thr = use_score ? st->as_double(0) : 0;
    const int64_t B = boxes.dim(0), N = boxes.dim(1), C = scores.dim(1);
    std::vector<int64_t> selected;  // triples
    std::vector<double> corners(static_cast<size_t>(N) * 4);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < N; ++i) {  // as (y1, x1, y2, x2) with y1 <= y2, x1 <= x2
        double v[4];
        for (int k = 0; k < 4; ++k) v[k] = boxes.as_double((b * N + i) * 4 + k);
        double* c = &corners[i * 4];
        if (center_) {
          c[0] = v[1] - v[3] / 2; c[2] = v[1] + v[3] / 2;
          c[1] = v[0] - v[2] / 2; c[3] = v[0] + v[2] / 2;
        } else {
          c[0] = std::min(v[0], v[2]); c[2] = std::max(v[0], v[2]);
          c[1] = std::min(v[1], v[3]); c[3] = std::max(v[1], v[3]);
        }
      }
      auto iou = [&](int64_t a, int64_t q) {
        const double* p = &corners[a * 4];
        const double* r = &corners[q * 4];
        const double ih = std::min(p[2], r[2]) - std::max(p[0], r[0]);
        const double iw = std::min(p[3], r[3]) - std::max(p[1], r[1]);
        if (ih <= 0 || iw <= 0) return 0.0;
        const double inter = ih * iw;
        const double uni = (p[2] - p[0]) * (p[3] - p[1]) + (r[2] - r[0]) * (r[3] - r[1]) - inter;
        return uni > 0 ? inter / uni : 0.0;
      };
      for (int64_t c = 0; c < C; ++c) {
        std::vector<int64_t> cand;
        for (int64_t i = 0; i < N; ++i)
          if (!use_score || scores.as_double((b * C + c) * N + i) > score_thr) cand.push_back(i);
        std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
          return scores.as_double((b * C + c) * N + p) > scores.as_double((b * C + c) * N + q);
        });
        std::vector<int64_t> kept;
        for (int64_t i : cand) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          bool ok = std::all_of(kept.begin(), kept.end(), [&](int64_t k) { return iou(i, k) <= iou_thr; });
          if (ok) kept.push_back(i);
        }
        for (int64_t i : kept) selected.insert(selected.end(), {b, c, i});
      }
    }
    Tensor& y = ctx.output(0, {static_cast<int64_t>(selected.size() / 3), 3}, DataType::Int64);
    std::copy(selected.begin(), selected.end(), y.data<int64_t>());
  }

 private:
  bool center_;
};

}  // namespace

void register_nms_kernels(KernelRegistry& r) { add_reference_kernel<NonMaxSuppressionKernel>(r, "NonMaxSuppression"); }

}  // namespace fusor
