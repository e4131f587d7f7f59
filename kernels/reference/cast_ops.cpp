// Cast and CastLike reference kernels: between every numeric type, bool, float16, bfloat16 and
// string. float16 rounds to nearest even; bfloat16 truncates (as ONNX's reference at opset <= 17
// and its test data do). Strings print the shortest text that reads back to the same value.
#include <charconv>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/half.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

inline uint16_t float_to_bfloat16_truncate(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  return static_cast<uint16_t>(x >> 16);
}

// Reads element i of a float16/bfloat16 tensor as float.
float load_half(const Tensor& x, int64_t i) {
  uint16_t h = static_cast<const uint16_t*>(x.raw())[i];
  return x.dtype() == DataType::Float16 ? half_to_float(h) : bfloat16_to_float(h);
}

template <class T>
std::string number_to_string(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "1" : "0";
  } else {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, res.ptr);
    if constexpr (std::is_floating_point_v<T>) {
      if (s == "inf") s = "INF";
      else if (s == "-inf") s = "-INF";
      else if (s == "nan" || s == "-nan") s = "NaN";
    }
    return s;
  }
}

template <class T>
T string_to_number(const std::string& s) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(std::strtod(s.c_str(), nullptr));
  else if constexpr (std::is_same_v<T, bool>) return std::strtod(s.c_str(), nullptr) != 0;
  else if constexpr (std::is_signed_v<T>) return static_cast<T>(std::strtoll(s.c_str(), nullptr, 10));
  else return static_cast<T>(std::strtoull(s.c_str(), nullptr, 10));
}

// static_cast, except that floating values going to an integer type saturate (NaN gives 0)
// instead of being undefined behaviour when out of range.
template <class D, class S>
D convert(S v) {
  if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D> && !std::is_same_v<D, bool>) {
    if (std::isnan(v)) return D(0);
    if (v <= static_cast<S>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    if (v >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  }
  return static_cast<D>(v);
}

bool is_half(DataType t) { return t == DataType::Float16 || t == DataType::BFloat16; }

void cast_tensor(const Tensor& x, Tensor& y, const std::string& w) {
  const DataType from = x.dtype(), to = y.dtype();
  const int64_t n = x.numel();
  if (from == to) {
    if (from == DataType::String) y.string_data() = x.string_data();
    else if (n) std::memcpy(y.raw(), x.raw(), x.nbytes());
    return;
  }
  if (to == DataType::String) {
    auto& out = y.string_data();
    if (is_half(from)) {
      for (int64_t i = 0; i < n; ++i) out[i] = number_to_string(load_half(x, i));
      return;
    }
    dispatch_numeric_bool(from, w, [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* px = x.data<S>();
      for (int64_t i = 0; i < n; ++i) out[i] = number_to_string(px[i]);
    });
    return;
  }
  if (is_half(to)) {
    uint16_t* py = y.data<uint16_t>();
    auto store = [&](int64_t i, float f) {
      py[i] = to == DataType::Float16 ? float_to_half(f) : float_to_bfloat16_truncate(f);
    };
    if (from == DataType::String) {
      for (int64_t i = 0; i < n; ++i) store(i, string_to_number<float>(x.string_data()[i]));
    } else if (is_half(from)) {
      for (int64_t i = 0; i < n; ++i) store(i, load_half(x, i));
    } else {
      dispatch_numeric_bool(from, w, [&](auto tag) {
        using S = typename decltype(tag)::type;
        const S* px = x.data<S>();
        for (int64_t i = 0; i < n; ++i) store(i, static_cast<float>(px[i]));
      });
    }
    return;
  }
  dispatch_numeric_bool(to, w, [&](auto dtag) {
    using D = typename decltype(dtag)::type;
    D* py = y.data<D>();
    if (from == DataType::String) {
      for (int64_t i = 0; i < n; ++i) py[i] = string_to_number<D>(x.string_data()[i]);
    } else if (is_half(from)) {
      for (int64_t i = 0; i < n; ++i) py[i] = convert<D>(load_half(x, i));
    } else {
      dispatch_numeric_bool(from, w, [&](auto stag) {
        using S = typename decltype(stag)::type;
        const S* px = x.data<S>();
        for (int64_t i = 0; i < n; ++i) py[i] = convert<D>(px[i]);
      });
    }
  });
}

class CastKernel : public Kernel {
 public:
  explicit CastKernel(const KernelInfo& info) {
    const Attribute* a = info.n().attr("to");
    if (!a) throw_bad_input(info.where() + ": missing attribute 'to'");
    if (a->kind == AttrKind::String) to_ = dtype_from_name(a->s);  // opset 1 spelled the type as text
    else to_ = static_cast<DataType>(a->i);
    if (to_ == DataType::Undefined || to_ == DataType::Complex64 || to_ == DataType::Complex128 ||
        (to_ != DataType::String && dtype_size(to_) == 0))
      throw_bad_input(info.where() + ": unsupported target type in 'to'");
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    Tensor& y = ctx.output(0, x.shape(), to_);
    cast_tensor(x, y, ctx.where());
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

 private:
  DataType to_ = DataType::Undefined;
};

class CastLikeKernel : public Kernel {
 public:
  explicit CastLikeKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& like = required_input(ctx, 1);
    Tensor& y = ctx.output(0, x.shape(), like.dtype());
    cast_tensor(x, y, ctx.where());
  }
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }
};

}  // namespace

void register_cast_kernels(KernelRegistry& r) {
  add_reference_kernel<CastKernel>(r, "Cast");
  add_reference_kernel<CastLikeKernel>(r, "CastLike");
}

}  // namespace fusor
