// Transpose, Concat and Split reference kernels (element moves, any element type).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "kernels/common/axes.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/strided_copy.h"
#include "kernels/reference/concat_split.h"
#include "kernels/reference/families.h"
#include "kernels/thread_pool.h"

namespace fusor {
namespace {

// Copies a (outer x block) slab layout: used by Concat/Split, which are both "copy contiguous
// blocks of inner*len elements per outer index". Works for strings too.
void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::String) {
    std::copy_n(src.string_data().begin() + src_off, count, dst.string_data().begin() + dst_off);
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + dst_off * es, static_cast<const char*>(src.raw()) + src_off * es,
              static_cast<size_t>(count) * es);
}

}  // namespace

Shape concat_shape(const std::vector<const Tensor*>& ins, int64_t axis, const std::string& where) {
  const Tensor& first = *ins.at(0);
  Shape out = first.shape();
  out[axis] = 0;
  for (const Tensor* t : ins) {
    bool ok = t->rank() == first.rank() && t->dtype() == first.dtype();
    for (int d = 0; ok && d < first.rank(); ++d) ok = d == axis || t->dim(d) == first.dim(d);
    if (!ok)
      throw_bad_input(where + ": inputs " + shape_str(first.shape()) + " and " + shape_str(t->shape()) +
                      " do not concatenate on axis " + std::to_string(axis));
    out[axis] += t->dim(static_cast<int>(axis));
  }
  return out;
}

namespace {

// One contiguous copy of a Concat: `bytes` from src to dst.
struct CopySegment {
  const char* src;
  char* dst;
  int64_t bytes;
};

// The segments' bytes as one range cut into pieces of kPieceBytes, copied over the pool's threads.
void parallel_copy(const std::vector<CopySegment>& segs, ThreadPool& pool) {
  constexpr int64_t kPieceBytes = 64 * 1024;
  std::vector<int64_t> start(segs.size() + 1, 0);  // prefix sums of the bytes
  for (size_t i = 0; i < segs.size(); ++i) start[i + 1] = start[i] + segs[i].bytes;
  const int64_t total = start.back(), pieces = (total + kPieceBytes - 1) / kPieceBytes;
  auto body = [&](int64_t p0, int64_t p1) {
    const int64_t b0 = p0 * kPieceBytes, b1 = std::min(total, p1 * kPieceBytes);
    size_t i = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), b0) - start.begin()) - 1;
    for (int64_t b = b0; b < b1 && i < segs.size(); ++i) {
      const int64_t off = b - start[i], n = std::min(b1, start[i + 1]) - b;
      if (n > 0) std::memcpy(segs[i].dst + off, segs[i].src + off, static_cast<size_t>(n));
      b += std::max<int64_t>(n, 0);
    }
  };
  // ~1 ns per 16 bytes streamed (kernels/thread_pool.h).
  pool.parallel_for_cost(pieces, static_cast<double>(kPieceBytes) / 16.0, body);
}

}  // namespace

void concat_into(const std::vector<const Tensor*>& ins, int64_t axis, Tensor& y, ThreadPool* pool) {
  const Shape& out = y.shape();
  const int64_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, static_cast<int64_t>(out.size()));
  if (pool && pool->num_threads() > 1 && y.dtype() != DataType::String) {
    const int64_t es = static_cast<int64_t>(dtype_size(y.dtype()));
    std::vector<CopySegment> segs;
    int64_t pos = 0;
    for (const Tensor* t : ins) {
      const int64_t len = t->dim(static_cast<int>(axis));
      for (int64_t o = 0; o < outer && len * inner > 0; ++o)
        segs.push_back({static_cast<const char*>(t->raw()) + o * len * inner * es,
                        static_cast<char*>(y.raw()) + (o * out[axis] + pos) * inner * es, len * inner * es});
      pos += len;
    }
    parallel_copy(segs, *pool);
    return;
  }
  int64_t pos = 0;  // offset along the axis
  for (const Tensor* t : ins) {
    const int64_t len = t->dim(static_cast<int>(axis));
    for (int64_t o = 0; o < outer; ++o) copy_elements(*t, o * len * inner, y, (o * out[axis] + pos) * inner, len * inner);
    pos += len;
  }
}

void slice_axis_into(const Tensor& x, int64_t axis, int64_t pos, Tensor& y) {
  const int64_t len = x.dim(static_cast<int>(axis)), part = y.dim(static_cast<int>(axis));
  const int64_t outer = dims_product(x.shape(), 0, axis), inner = dims_product(x.shape(), axis + 1, x.rank());
  for (int64_t o = 0; o < outer; ++o) copy_elements(x, (o * len + pos) * inner, y, o * part * inner, part * inner);
}

namespace {

class TransposeKernel : public Kernel {
 public:
  explicit TransposeKernel(const KernelInfo& info) : perm_(info.n().attr_ints("perm")) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const int rank = x.rank();
    std::vector<int64_t> perm = perm_;
    if (perm.empty()) {
      perm.resize(rank);
      std::iota(perm.rbegin(), perm.rend(), 0);
    }
    if (static_cast<int>(perm.size()) != rank) throw_bad_input(w + ": perm length does not match the input rank");
    std::vector<int64_t> sorted = normalize_axes(perm, rank, w);  // checks a permutation
    (void)sorted;
    Shape out(rank);
    std::vector<int64_t> in_strides = row_major_strides(x.shape()), st(rank);
    for (int d = 0; d < rank; ++d) {
      int64_t p = perm[d] < 0 ? perm[d] + rank : perm[d];
      out[d] = x.dim(static_cast<int>(p));
      st[d] = in_strides[p];
    }
    Tensor& y = ctx.output(0, out, x.dtype());
    strided_copy(x, 0, st, y, &ctx.threads());
  }

 private:
  std::vector<int64_t> perm_;
};

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info) : axis_(info.n().attr_int("axis", 0)) {}
  void compute(KernelContext& ctx) override {
    const std::string w = ctx.where();
    std::vector<const Tensor*> ins;
    for (int i = 0; i < ctx.num_inputs(); ++i) ins.push_back(&required_input(ctx, i));
    if (ins.empty()) throw_bad_input(w + ": needs at least one input");
    const int64_t axis = normalize_axis(axis_, ins[0]->rank(), w);
    Tensor& y = ctx.output(0, concat_shape(ins, axis, w), ins[0]->dtype());
    concat_into(ins, axis, y, &ctx.threads());
  }

 private:
  int64_t axis_;
};

// Split: sizes from the `split` attribute (before opset 13) or input 1 (opset 13+); otherwise
// equal parts, the last one smaller when the dim does not divide (opset 18 behaviour, harmless).
class SplitKernel : public Kernel {
 public:
  explicit SplitKernel(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", 0)), from_input_(info.opset == 0 ? node_has_input(info, 1) : info.opset >= 13),
        attr_split_(info.n().attr_ints("split")) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    const int64_t axis = normalize_axis(axis_, x.rank(), w);
    const int64_t len = x.dim(static_cast<int>(axis));
    const int nout = ctx.num_outputs();
    std::vector<int64_t> split = attr_split_;
    if (from_input_)
      if (const Tensor* s = optional_input(ctx, 1)) split = int_list_input(*s, w, "split");
    if (split.empty()) {
      int64_t part = (len + nout - 1) / nout;
      for (int i = 0; i < nout; ++i) split.push_back(std::max<int64_t>(0, std::min(part, len - part * i)));
    }
    if (static_cast<int>(split.size()) != nout || std::accumulate(split.begin(), split.end(), int64_t(0)) != len)
      throw_bad_input(w + ": split sizes do not match the outputs or the axis length " + std::to_string(len));
    int64_t pos = 0;
    for (int i = 0; i < nout; ++i) {
      if (split[i] < 0) throw_bad_input(w + ": negative split size");
      if (ctx.output_wanted(i)) {
        Shape s = x.shape();
        s[axis] = split[i];
        Tensor& y = ctx.output(i, s, x.dtype());
        slice_axis_into(x, axis, pos, y);
      }
      pos += split[i];
    }
  }

 private:
  int64_t axis_;
  bool from_input_;
  std::vector<int64_t> attr_split_;
};

}  // namespace

void register_transpose_kernels(KernelRegistry& r) { add_reference_kernel<TransposeKernel>(r, "Transpose"); }
void register_concat_split_kernels(KernelRegistry& r) {
  add_reference_kernel<ConcatKernel>(r, "Concat");
  add_reference_kernel<SplitKernel>(r, "Split");
}

}  // namespace fusor
