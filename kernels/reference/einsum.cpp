// Reference Einsum: parses the equation once, then one plain index loop over every label.
//
// Labels are letters; "..." stands for the same run of broadcast dimensions in every operand.
// Without "->" the output is the ellipsis dims followed by the labels used exactly once, in
// alphabetical order (numpy's implicit mode). A label repeated within one operand takes its
// diagonal. Every combination of label values is visited once: output labels select the output
// element, the remaining labels are summed.
#include <algorithm>
#include <cctype>
#include <map>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/nn_families.h"

namespace fusor {

namespace {

// A term's labels: letters as themselves (0..51); -1 marks the ellipsis position.
using Term = std::vector<int>;
constexpr int kEllipsis = -1;
constexpr int kLetters = 52;

int letter_label(char c, const std::string& where) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  throw_bad_input(where + ": invalid character '" + std::string(1, c) + "' in the Einsum equation");
}

Term parse_term(const std::string& text, const std::string& where) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0) throw_bad_input(where + ": malformed ellipsis in the Einsum equation");
      if (std::count(t.begin(), t.end(), kEllipsis)) throw_bad_input(where + ": more than one ellipsis in a term");
      t.push_back(kEllipsis);
      i += 2;
      continue;
    }
    t.push_back(letter_label(c, where));
  }
  return t;
}

class EinsumKernel : public Kernel {
 public:
  explicit EinsumKernel(const KernelInfo& info) : where_(info.where()) {
    std::string eq = info.n().attr_string("equation", "");
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    size_t start = 0;
    for (;;) {
      const size_t comma = lhs.find(',', start);
      inputs_.push_back(parse_term(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start), where_));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    if (arrow != std::string::npos) {
      output_ = parse_term(eq.substr(arrow + 2), where_);
    } else {
      std::map<int, int> uses;
      bool ellipsis = false;
      for (const Term& t : inputs_)
        for (int l : t) {
          if (l == kEllipsis) ellipsis = true;
          else ++uses[l];
        }
      if (ellipsis) output_.push_back(kEllipsis);
      for (auto [l, n] : uses)
        if (n == 1) output_.push_back(l);
    }
  }

  void compute(KernelContext& ctx) override {
    const int n_in = static_cast<int>(inputs_.size());
    if (ctx.num_inputs() != n_in)
      throw_bad_input(where_ + ": the equation has " + std::to_string(n_in) + " operands but the node has " +
                      std::to_string(ctx.num_inputs()) + " inputs");
    std::vector<const Tensor*> xs;
    for (int i = 0; i < n_in; ++i) xs.push_back(&required_input(ctx, i));
    // The ellipsis covers the dims a term does not name; all ellipses broadcast together.
    int ell_rank = 0;
    for (int i = 0; i < n_in; ++i) {
      const int named = static_cast<int>(inputs_[i].size()) - static_cast<int>(std::count(inputs_[i].begin(), inputs_[i].end(), kEllipsis));
      const bool has_ell = named != static_cast<int>(inputs_[i].size());
      if (xs[i]->rank() < named || (!has_ell && xs[i]->rank() != named))
        throw_bad_input(where_ + ": operand " + std::to_string(i) + " of shape " + shape_str(xs[i]->shape()) +
                        " does not match its term in the equation");
      if (has_ell) ell_rank = std::max(ell_rank, xs[i]->rank() - named);
      if (xs[i]->dtype() != xs[0]->dtype()) throw_bad_input(where_ + ": operands have different element types");
    }
    // Labels: letters 0..51, ellipsis dims kLetters + j (j counted from the left of the widest).
    const int n_labels = kLetters + ell_rank;
    std::vector<int64_t> size(n_labels, -1);
    // strides[i][label]: element stride of operand i along the label (sum over repeated axes).
    std::vector<std::vector<int64_t>> strides(n_in, std::vector<int64_t>(n_labels, 0));
    for (int i = 0; i < n_in; ++i) {
      const std::vector<int> axes = expand(inputs_[i], xs[i]->rank(), ell_rank);
      int64_t stride = 1;
      for (int a = xs[i]->rank() - 1; a >= 0; --a) {
        const int l = axes[a];
        const int64_t d = xs[i]->dim(a);
        if (d != 1 || size[l] == -1) {
          if (size[l] != -1 && size[l] != 1 && size[l] != d)
            throw_bad_input(where_ + ": dimension mismatch for an Einsum label: " + std::to_string(size[l]) + " vs " + std::to_string(d));
          if (size[l] == -1 || size[l] == 1) size[l] = d;
        }
        if (d != 1) strides[i][l] += stride;
        stride *= d;
      }
    }
    const bool out_ell = std::count(output_.begin(), output_.end(), kEllipsis) > 0;
    const int out_named = static_cast<int>(output_.size()) - (out_ell ? 1 : 0);
    const std::vector<int> out_axes = expand(output_, out_named + (out_ell ? ell_rank : 0), ell_rank);
    Shape out_shape;
    std::vector<bool> is_out(n_labels, false);
    for (int l : out_axes) {
      if (size[l] == -1) throw_bad_input(where_ + ": output label does not appear in any operand");
      if (is_out[l]) throw_bad_input(where_ + ": output label repeated");
      is_out[l] = true;
      out_shape.push_back(size[l]);
    }
    // Loop order: output labels (row-major) then the summed ones.
    std::vector<int> order(out_axes.begin(), out_axes.end());
    for (int l = 0; l < n_labels; ++l)
      if (size[l] != -1 && !is_out[l]) order.push_back(l);
    Tensor& y = ctx.output(0, out_shape, xs[0]->dtype());
    dispatch_numeric(xs[0]->dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      const int64_t out_n = shape_numel(out_shape);
      std::fill(py, py + out_n, T(0));
      int64_t total = 1;
      for (int l : order) total *= size[l];
      std::vector<int64_t> idx(order.size(), 0);
      for (int64_t it = 0; it < total; ++it) {
        int64_t out_off = 0;
        for (size_t k = 0; k < out_axes.size(); ++k) out_off = out_off * size[order[k]] + idx[k];
        T prod = T(1);
        for (int i = 0; i < n_in; ++i) {
          int64_t off = 0;
          for (size_t k = 0; k < order.size(); ++k) off += idx[k] * strides[i][order[k]];
          prod = static_cast<T>(prod * xs[i]->data<T>()[off]);
        }
        py[out_off] = static_cast<T>(py[out_off] + prod);
        for (int k = static_cast<int>(order.size()) - 1; k >= 0; --k) {
          if (++idx[k] < size[order[k]]) break;
          idx[k] = 0;
        }
      }
    });
  }

 private:
  // The label of each axis of a rank-`rank` operand whose term is `t`; ellipsis dims are aligned
  // to the right of the widest ellipsis.
  static std::vector<int> expand(const Term& t, int rank, int ell_rank) {
    std::vector<int> axes;
    const int named = static_cast<int>(t.size()) - static_cast<int>(std::count(t.begin(), t.end(), kEllipsis));
    for (int l : t) {
      if (l != kEllipsis) {
        axes.push_back(l);
        continue;
      }
      const int here = rank - named;
      for (int j = 0; j < here; ++j) axes.push_back(kLetters + ell_rank - here + j);
    }
    return axes;
  }

  std::string where_;
  std::vector<Term> inputs_;
  Term output_;
};

}  // namespace

void register_misc_einsum_kernels(KernelRegistry& r) { add_reference_kernel<EinsumKernel>(r, "Einsum"); }

}  // namespace fusor
