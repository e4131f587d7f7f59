// Index-computing reference kernels: NonZero OneHot Trilu Compress ReverseSequence Unique.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

#include "kernels/common/axes.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

// Lexicographic order of equal-length slices (an explicit loop: GCC 12 warns falsely on the
// memcmp that std::vector<uint8_t>::operator< turns into).
struct SliceLess {
  template <class T>
  bool operator()(const std::vector<T>& a, const std::vector<T>& b) const {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
      if (a[i] != b[i]) return a[i] < b[i];
    return a.size() < b.size();
  }
};

class NonZeroKernel : public Kernel {
 public:
  explicit NonZeroKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> hits;
    dispatch_numeric_bool(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      const int64_t n = x.numel();
      for (int64_t i = 0; i < n; ++i)
        if (px[i] != T(0)) hits.push_back(i);
    });
    const int64_t rank = x.rank(), nnz = static_cast<int64_t>(hits.size());
    Tensor& y = ctx.output(0, {rank, nnz}, DataType::Int64);
    int64_t* py = y.data<int64_t>();
    std::vector<int64_t> st = row_major_strides(x.shape());
    for (int64_t j = 0; j < nnz; ++j)
      for (int64_t d = 0; d < rank; ++d) py[d * nnz + j] = hits[j] / st[d] % x.dim(static_cast<int>(d));
  }
};

class OneHotKernel : public Kernel {
 public:
  explicit OneHotKernel(const KernelInfo& info) : axis_(info.n().attr_int("axis", -1)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& ind = required_input(ctx, 0);
    const Tensor& dep = required_input(ctx, 1);
    const Tensor& vals = required_input(ctx, 2);
    const std::string w = ctx.where();
    if (dep.numel() != 1 || vals.numel() != 2) throw_bad_input(w + ": depth must be a scalar and values hold 2 elements");
    const int64_t depth = static_cast<int64_t>(dep.as_double(0));
    if (depth <= 0) throw_bad_input(w + ": depth must be positive");
    const int64_t axis = normalize_axis(axis_, ind.rank() + 1, w);
    Shape out = ind.shape();
    out.insert(out.begin() + axis, depth);
    Tensor& y = ctx.output(0, out, vals.dtype());
    const int64_t outer = dims_product(ind.shape(), 0, axis), inner = dims_product(ind.shape(), axis, ind.rank());
    std::vector<double> idx(static_cast<size_t>(ind.numel()));
    for (int64_t i = 0; i < ind.numel(); ++i) idx[i] = ind.as_double(i);
    dispatch_by_size(vals.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T off = vals.data<T>()[0], on = vals.data<T>()[1];
      T* py = y.data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t dd = 0; dd < depth; ++dd)
          for (int64_t i = 0; i < inner; ++i) {
            int64_t k = static_cast<int64_t>(idx[o * inner + i]);
            if (k < 0) k += depth;
            py[(o * depth + dd) * inner + i] = k == dd ? on : off;
          }
    });
  }

 private:
  int64_t axis_;
};

class TriluKernel : public Kernel {
 public:
  explicit TriluKernel(const KernelInfo& info) : upper_(info.n().attr_int("upper", 1) != 0) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.rank() < 2) throw_bad_input(w + ": input must have rank >= 2");
    int64_t k = 0;
    if (const Tensor* kt = optional_input(ctx, 1)) {
      std::vector<int64_t> kv = int_list_input(*kt, w, "k");
      if (kv.size() != 1) throw_bad_input(w + ": k must be a scalar");
      k = kv[0];
    }
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    const int64_t rows = x.dim(-2), cols = x.dim(-1), mats = dims_product(x.shape(), 0, x.rank() - 2);
    dispatch_by_size(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t m = 0; m < mats; ++m)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t off = (m * rows + i) * cols + j;
            const bool keep = upper_ ? j - i >= k : j - i <= k;
            py[off] = keep ? px[off] : T(0);
          }
    });
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

 private:
  bool upper_;
};

class CompressKernel : public Kernel {
 public:
  explicit CompressKernel(const KernelInfo& info) : has_axis_(info.n().attr("axis") != nullptr), axis_(info.n().attr_int("axis", 0)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x0 = required_input(ctx, 0);
    const Tensor& cond = required_input(ctx, 1);
    const std::string w = ctx.where();
    if (cond.rank() != 1) throw_bad_input(w + ": condition must be 1-D");
    Tensor x = has_axis_ ? x0 : x0.reshaped({x0.numel()});
    const int64_t axis = normalize_axis(has_axis_ ? axis_ : 0, x.rank(), w);
    const int64_t len = x.dim(static_cast<int>(axis));
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < std::min<int64_t>(len, cond.numel()); ++i)
      if (cond.as_double(i) != 0) keep.push_back(i);
    Shape out = x.shape();
    out[axis] = static_cast<int64_t>(keep.size());
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t outer = dims_product(x.shape(), 0, axis), inner = dims_product(x.shape(), axis + 1, x.rank());
    const size_t es = dtype_size(x.dtype());
    if (!es) throw_unsupported_dtype(w, x.dtype());
    const char* px = static_cast<const char*>(x.raw());
    char* py = static_cast<char*>(y.raw());
    const int64_t m = static_cast<int64_t>(keep.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < m; ++j)
        std::memcpy(py + ((o * m + j) * inner) * es, px + ((o * len + keep[j]) * inner) * es, inner * es);
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

class ReverseSequenceKernel : public Kernel {
 public:
  explicit ReverseSequenceKernel(const KernelInfo& info)
      : time_axis_(info.n().attr_int("time_axis", 0)), batch_axis_(info.n().attr_int("batch_axis", 1)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    std::vector<int64_t> lens = int_list_input(required_input(ctx, 1), w, "sequence_lens");
    const int64_t ta = normalize_axis(time_axis_, x.rank(), w), ba = normalize_axis(batch_axis_, x.rank(), w);
    if (ta == ba || x.rank() < 2) throw_bad_input(w + ": time_axis and batch_axis must differ");
    if (static_cast<int64_t>(lens.size()) != x.dim(static_cast<int>(ba))) throw_bad_input(w + ": sequence_lens length differs from the batch size");
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    std::vector<int64_t> st = row_major_strides(x.shape()), counter(x.rank(), 0);
    const int64_t tlen = x.dim(static_cast<int>(ta));
    dispatch_by_size(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      const int64_t n = x.numel();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t t = counter[ta], len = std::clamp<int64_t>(lens[counter[ba]], 0, tlen);
        const int64_t src = t < len ? i + (len - 1 - 2 * t) * st[ta] : i;
        py[i] = px[src];
        for (int d = x.rank() - 1; d >= 0; --d) {
          if (++counter[d] < x.dim(d)) break;
          counter[d] = 0;
        }
      }
    });
  }

 private:
  int64_t time_axis_, batch_axis_;
};

// Unique: over elements (no axis) or over slices along `axis`. sorted=1 orders the unique values
// ascending (slices lexicographically); sorted=0 keeps first-occurrence order.
class UniqueKernel : public Kernel {
 public:
  explicit UniqueKernel(const KernelInfo& info)
      : has_axis_(info.n().attr("axis") != nullptr), axis_(info.n().attr_int("axis", 0)),
        sorted_(info.n().attr_int("sorted", 1) != 0) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x0 = required_input(ctx, 0);
    const std::string w = ctx.where();
    Tensor x = has_axis_ ? x0 : x0.reshaped({x0.numel()});
    const int64_t axis = normalize_axis(has_axis_ ? axis_ : 0, x.rank(), w);
    const int64_t outer = dims_product(x.shape(), 0, axis), len = x.dim(static_cast<int>(axis)),
                  inner = dims_product(x.shape(), axis + 1, x.rank());
    dispatch_numeric(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      // Slice k along the axis as a vector of its elements (outer-major).
      auto slice = [&](int64_t k) {
        std::vector<T> s;
        s.reserve(static_cast<size_t>(outer * inner));
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) s.push_back(px[(o * len + k) * inner + i]);
        return s;
      };
      std::map<std::vector<T>, int64_t, SliceLess> first;  // slice -> unique id (first-occurrence order)
      std::vector<int64_t> firsts, inverse(static_cast<size_t>(len)), counts;
      std::vector<std::vector<T>> uniq;
      for (int64_t k = 0; k < len; ++k) {
        std::vector<T> s = slice(k);
        auto [it, fresh] = first.emplace(s, static_cast<int64_t>(uniq.size()));
        if (fresh) {
          uniq.push_back(std::move(s));
          firsts.push_back(k);
          counts.push_back(0);
        }
        inverse[k] = it->second;
        ++counts[it->second];
      }
      const int64_t u = static_cast<int64_t>(uniq.size());
      std::vector<int64_t> order(static_cast<size_t>(u));  // output position -> unique id
      std::iota(order.begin(), order.end(), 0);
      if (sorted_) std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return SliceLess()(uniq[a], uniq[b]); });
      std::vector<int64_t> pos(static_cast<size_t>(u));
      for (int64_t p = 0; p < u; ++p) pos[order[p]] = p;
      Shape out = x.shape();
      out[axis] = u;
      Tensor& y = ctx.output(0, out, x.dtype());
      T* py = y.data<T>();
      for (int64_t p = 0; p < u; ++p) {
        const std::vector<T>& s = uniq[order[p]];
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) py[(o * u + p) * inner + i] = s[o * inner + i];
      }
      auto write = [&](int idx, int64_t n, auto&& value) {
        if (ctx.num_outputs() <= idx || !ctx.output_wanted(idx)) return;
        Tensor& t = ctx.output(idx, {n}, DataType::Int64);
        for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = value(i);
      };
      write(1, u, [&](int64_t p) { return firsts[order[p]]; });
      write(2, len, [&](int64_t k) { return pos[inverse[k]]; });
      write(3, u, [&](int64_t p) { return counts[order[p]]; });
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  add_reference_kernel<NonZeroKernel>(r, "NonZero");
  add_reference_kernel<OneHotKernel>(r, "OneHot");
  add_reference_kernel<TriluKernel>(r, "Trilu");
  add_reference_kernel<CompressKernel>(r, "Compress");
  add_reference_kernel<ReverseSequenceKernel>(r, "ReverseSequence");
  add_reference_kernel<UniqueKernel>(r, "Unique");
}

}  // namespace fusor
