// The sequence and optional ops: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap (its body runs
// through KernelContext::run_subgraph), Optional, OptionalHasElement, OptionalGetElement.
//
// A sequence is Tensor::sequence (an immutable list whose items own their storage), an empty
// optional Tensor::none(), a present optional its content (core/ir/tensor.h). Sequences are
// never in the arena: these kernels hand them over with KernelContext::set_value; a tensor that
// enters a sequence is cloned out of the arena first. An out-of-range position, an element of
// another type or the element of an empty optional is BadInput naming the node.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/common/axes.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/concat_split.h"
#include "kernels/register.h"

namespace fusor {

namespace {

const Tensor& sequence_input(KernelContext& ctx, int i) {
  const Tensor& s = required_input(ctx, i);
  if (!s.is_sequence()) throw_bad_input(ctx.where() + ": input " + std::to_string(i) + " is a " + s.describe() + ", not a sequence");
  return s;
}

const Tensor& tensor_input(KernelContext& ctx, int i) {
  const Tensor& t = required_input(ctx, i);
  if (!t.is_plain()) throw_bad_input(ctx.where() + ": input " + std::to_string(i) + " is a " + t.describe() + ", not a tensor");
  return t;
}

// A position input (a scalar int32/int64) checked against [-n, n - 1], or [-n, n] when
// `may_be_end` (SequenceInsert), and made non-negative.
int64_t position(KernelContext& ctx, const Tensor& p, int64_t n, bool may_be_end) {
  if (!p.is_plain() || p.numel() != 1 || (p.dtype() != DataType::Int64 && p.dtype() != DataType::Int32))
    throw_bad_input(ctx.where() + ": position must be an int32 or int64 scalar");
  const int64_t pos = p.as_int64(0), hi = may_be_end ? n : n - 1;
  if (pos < -n || pos > hi)
    throw_bad_input(ctx.where() + ": position " + std::to_string(pos) + " is out of range for a sequence of " +
                    std::to_string(n) + " tensors (valid: " + std::to_string(-n) + " to " + std::to_string(hi) + ")");
  return pos < 0 ? pos + n : pos;
}

// The element type a new sequence gets: the one the sequence had, else its items', else the type
// the model declares for output `out`.
DataType declared_elem(const KernelInfo& info, size_t out) {
  const ValueType* t = out < info.output_types.size() ? info.output_types[out] : nullptr;
  if (t && t->is_optional() && t->element) t = t->element.get();
  if (t && t->is_sequence() && t->element && t->element->is_tensor()) return t->element->elem;
  return DataType::Undefined;
}

void check_item_type(KernelContext& ctx, DataType elem, const Tensor& t) {
  if (elem != DataType::Undefined && t.dtype() != elem)
    throw_bad_input(ctx.where() + ": cannot put a " + dtype_name(t.dtype()) + " tensor in a sequence of " +
                    dtype_name(elem) + " tensors");
}

// Output i is the value of input `in` as it is: a plain tensor through output_alias (which copies
// when the input's arena memory cannot be shared), a sequence or none through set_value.
void forward(KernelContext& ctx, int i, int in) {
  const Tensor& v = required_input(ctx, in);
  if (v.is_plain()) ctx.output_alias(i, in, v.shape());
  else ctx.set_value(i, v);
}

class SequenceEmptyKernel : public Kernel {
 public:
  explicit SequenceEmptyKernel(const KernelInfo& info)
      : elem_(static_cast<DataType>(info.n().attr_int("dtype", static_cast<int64_t>(DataType::Float)))) {
    if (dtype_size(elem_) == 0 && elem_ != DataType::String) throw_bad_input(info.where() + ": unsupported dtype");
  }
  void compute(KernelContext& ctx) override { ctx.set_value(0, Tensor::sequence(elem_, {})); }

 private:
  DataType elem_;
};

class SequenceConstructKernel : public Kernel {
 public:
  explicit SequenceConstructKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    std::vector<Tensor> items;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = tensor_input(ctx, i);
      if (!items.empty()) check_item_type(ctx, items[0].dtype(), t);
      items.push_back(t.clone());
    }
    if (items.empty()) throw_bad_input(ctx.where() + ": needs at least one input");
    DataType elem = items[0].dtype();
    ctx.set_value(0, Tensor::sequence(elem, std::move(items)));
  }
};

class SequenceInsertKernel : public Kernel {
 public:
  explicit SequenceInsertKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& s = sequence_input(ctx, 0);
    const Tensor& t = tensor_input(ctx, 1);
    DataType elem = s.sequence_elem();
    if (elem == DataType::Undefined && !s.items().empty()) elem = s.items()[0].dtype();
    check_item_type(ctx, elem, t);
    const int64_t n = static_cast<int64_t>(s.items().size());
    const Tensor* p = optional_input(ctx, 2);
    const int64_t at = p ? position(ctx, *p, n, true) : n;
    std::vector<Tensor> items = s.items();
    items.insert(items.begin() + at, t.clone());
    ctx.set_value(0, Tensor::sequence(elem == DataType::Undefined ? t.dtype() : elem, std::move(items)));
  }
};

class SequenceAtKernel : public Kernel {
 public:
  explicit SequenceAtKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& s = sequence_input(ctx, 0);
    const int64_t at = position(ctx, required_input(ctx, 1), static_cast<int64_t>(s.items().size()), false);
    ctx.set_value(0, s.items()[static_cast<size_t>(at)]);
  }
};

class SequenceEraseKernel : public Kernel {
 public:
  explicit SequenceEraseKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& s = sequence_input(ctx, 0);
    const int64_t n = static_cast<int64_t>(s.items().size());
    const Tensor* p = optional_input(ctx, 1);
    if (!p && n == 0) throw_bad_input(ctx.where() + ": cannot erase from an empty sequence");
    const int64_t at = p ? position(ctx, *p, n, false) : n - 1;
    std::vector<Tensor> items = s.items();
    items.erase(items.begin() + at);
    ctx.set_value(0, Tensor::sequence(s.sequence_elem(), std::move(items)));
  }
};

class SequenceLengthKernel : public Kernel {
 public:
  explicit SequenceLengthKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& s = sequence_input(ctx, 0);
    *ctx.output(0, {}, DataType::Int64).data<int64_t>() = static_cast<int64_t>(s.items().size());
  }
};

// SplitToSequence: without `split`, pieces of one along the axis (the axis removed when
// keepdims=0); a scalar `split` gives pieces of that length (the last one shorter); a 1-D
// `split` gives the lengths, which must add up to the axis length.
class SplitToSequenceKernel : public Kernel {
 public:
  explicit SplitToSequenceKernel(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", 0)), keepdims_(info.n().attr_int("keepdims", 1) != 0) {}
  void compute(KernelContext& ctx) override {
    const std::string w = ctx.where();
    const Tensor& x = tensor_input(ctx, 0);
    const int64_t axis = normalize_axis(axis_, x.rank(), w);
    const int64_t len = x.dim(static_cast<int>(axis));
    const Tensor* split = optional_input(ctx, 1);
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (!split) {
      sizes.assign(static_cast<size_t>(len), 1);
      squeeze = !keepdims_;
    } else if (split->rank() == 0) {
      const int64_t part = split->as_int64(0);
      if (part <= 0) throw_bad_input(w + ": split must be positive, got " + std::to_string(part));
      for (int64_t at = 0; at < len; at += part) sizes.push_back(std::min(part, len - at));
    } else {
      sizes = int_list_input(*split, w, "split");
      int64_t sum = 0;
      for (int64_t v : sizes) {
        if (v < 0) throw_bad_input(w + ": negative split length " + std::to_string(v));
        sum += v;
      }
      if (sum != len)
        throw_bad_input(w + ": split lengths add up to " + std::to_string(sum) + ", the axis has " + std::to_string(len));
    }
    std::vector<Tensor> items;
    int64_t pos = 0;
    for (int64_t part : sizes) {
      Shape s = x.shape();
      s[static_cast<size_t>(axis)] = part;
      Tensor y(x.dtype(), s);
      slice_axis_into(x, axis, pos, y);
      if (squeeze) {
        s.erase(s.begin() + axis);
        y = y.reshaped(s);
      }
      items.push_back(std::move(y));
      pos += part;
    }
    ctx.set_value(0, Tensor::sequence(x.dtype(), std::move(items)));
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

// ConcatFromSequence: the items concatenated along `axis`, or stacked along a new axis when
// new_axis=1 (then axis may be -rank-1 .. rank).
class ConcatFromSequenceKernel : public Kernel {
 public:
  explicit ConcatFromSequenceKernel(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", 0)), new_axis_(info.n().attr_int("new_axis", 0) != 0) {
    if (!info.n().attr("axis")) throw_bad_input(info.where() + ": missing required attribute 'axis'");
  }
  void compute(KernelContext& ctx) override {
    const std::string w = ctx.where();
    const Tensor& s = sequence_input(ctx, 0);
    if (s.items().empty()) throw_bad_input(w + ": cannot concatenate an empty sequence");
    const Tensor& first = s.items()[0];
    const int64_t axis = normalize_axis(axis_, first.rank() + (new_axis_ ? 1 : 0), w);
    std::vector<Tensor> stacked;  // with the new axis of length 1, when new_axis
    std::vector<const Tensor*> ins;
    for (const Tensor& t : s.items()) {
      if (new_axis_) {
        Shape sh = t.shape();
        sh.insert(sh.begin() + std::min<int64_t>(axis, t.rank()), 1);
        stacked.push_back(t.reshaped(sh));
      } else {
        ins.push_back(&t);
      }
    }
    for (const Tensor& t : stacked) ins.push_back(&t);
    Tensor& y = ctx.output(0, concat_shape(ins, axis, w), first.dtype());
    concat_into(ins, axis, y);
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

// SequenceMap: runs the body once per position of the input sequence; sequence inputs give the
// body their item at that position (all must be as long as the first), tensor inputs are given
// whole every time. Body output j, across the iterations, makes output sequence j.
class SequenceMapKernel : public Kernel {
 public:
  explicit SequenceMapKernel(const KernelInfo& info) {
    const Attribute* a = info.n().attr("body");
    if (!a || a->kind != AttrKind::Graph || !a->g) throw_bad_input(info.where() + ": missing graph attribute 'body'");
    body_ = a->g.get();
    for (size_t o = 0; o < info.n().outputs.size(); ++o) elems_.push_back(declared_elem(info, o));
  }
  void compute(KernelContext& ctx) override {
    const Tensor& first = sequence_input(ctx, 0);
    const size_t n = first.items().size();
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor& in = required_input(ctx, i);
      if (in.is_sequence() && in.items().size() != n)
        throw_bad_input(ctx.where() + ": input " + std::to_string(i) + " has " + std::to_string(in.items().size()) +
                        " tensors, the first sequence " + std::to_string(n));
    }
    std::vector<std::vector<Tensor>> outs(static_cast<size_t>(ctx.num_outputs()));
    std::vector<Tensor> body_in(static_cast<size_t>(ctx.num_inputs()));
    for (size_t k = 0; k < n; ++k) {
      for (int i = 0; i < ctx.num_inputs(); ++i) {
        const Tensor& in = required_input(ctx, i);
        body_in[static_cast<size_t>(i)] = in.is_sequence() ? in.items()[k] : in;
      }
      std::vector<Tensor> r = ctx.run_subgraph(*body_, body_in);
      if (r.size() != outs.size())
        throw_bad_input(ctx.where() + ": the body has " + std::to_string(r.size()) + " outputs, the node " +
                        std::to_string(outs.size()));
      for (size_t j = 0; j < r.size(); ++j) {
        if (!r[j].is_plain()) throw_bad_input(ctx.where() + ": body output " + std::to_string(j) + " is not a tensor");
        outs[j].push_back(std::move(r[j]));
      }
    }
    for (size_t j = 0; j < outs.size(); ++j) {
      DataType elem = outs[j].empty() ? elems_[j] : outs[j][0].dtype();
      ctx.set_value(static_cast<int>(j), Tensor::sequence(elem, std::move(outs[j])));
    }
  }

 private:
  const Graph* body_ = nullptr;
  std::vector<DataType> elems_;
};

// Optional: the input as a present optional, or an empty one (the `type` attribute) when absent.
class OptionalKernel : public Kernel {
 public:
  explicit OptionalKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    if (optional_input(ctx, 0)) forward(ctx, 0, 0);
    else ctx.set_value(0, Tensor::none());
  }
};

class OptionalHasElementKernel : public Kernel {
 public:
  explicit OptionalHasElementKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor* v = optional_input(ctx, 0);
    *ctx.output(0, {}, DataType::Bool).data<bool>() = v && !v->is_none();
  }
};

class OptionalGetElementKernel : public Kernel {
 public:
  explicit OptionalGetElementKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& v = required_input(ctx, 0);
    if (v.is_none()) throw_bad_input(ctx.where() + ": the optional input is empty (it has no element to get)");
    forward(ctx, 0, 0);
  }
};

}  // namespace

void register_sequence_kernels(KernelRegistry& r) {
  add_reference_kernel<SequenceEmptyKernel>(r, "SequenceEmpty", 11);
  add_reference_kernel<SequenceConstructKernel>(r, "SequenceConstruct", 11);
  add_reference_kernel<SequenceInsertKernel>(r, "SequenceInsert", 11);
  add_reference_kernel<SequenceAtKernel>(r, "SequenceAt", 11);
  add_reference_kernel<SequenceEraseKernel>(r, "SequenceErase", 11);
  add_reference_kernel<SequenceLengthKernel>(r, "SequenceLength", 11);
  add_reference_kernel<SplitToSequenceKernel>(r, "SplitToSequence", 11);
  add_reference_kernel<ConcatFromSequenceKernel>(r, "ConcatFromSequence", 11);
  add_reference_kernel<SequenceMapKernel>(r, "SequenceMap", 17);
  add_reference_kernel<OptionalKernel>(r, "Optional", 15);
  add_reference_kernel<OptionalHasElementKernel>(r, "OptionalHasElement", 15);
  add_reference_kernel<OptionalGetElementKernel>(r, "OptionalGetElement", 15);
}

}  // namespace fusor
