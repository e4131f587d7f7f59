// Signal reference kernels (opset 17): DFT, STFT, MelWeightMatrix. The transforms are the direct
// O(n^2) sums of the definition, in double precision: plain and obviously right.
#include <cmath>
#include <numbers>

#include "kernels/common/axes.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

// out[k] = sum_n in[n] * e^(-+2 pi i k n / len), k < bins; in has `count` complex samples (the
// rest up to len are zero); inverse divides by len.
void dft_1d(const double* re, const double* im, int64_t count, int64_t len, int64_t bins, bool inverse,
            double* out_re, double* out_im) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    for (int64_t n = 0; n < std::min(count, len); ++n) {
      const double a = sign * 2 * std::numbers::pi * static_cast<double>((k * n) % len) / static_cast<double>(len);
      const double c = std::cos(a), s = std::sin(a);
      sr += re[n] * c - im[n] * s;
      si += re[n] * s + im[n] * c;
    }
    if (inverse) {
      sr /= static_cast<double>(len);
      si /= static_cast<double>(len);
    }
    out_re[k] = sr;
    out_im[k] = si;
  }
}

class DFTKernel : public Kernel {
 public:
  explicit DFTKernel(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", 1)), inverse_(info.n().attr_int("inverse", 0) != 0),
        onesided_(info.n().attr_int("onesided", 0) != 0) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.rank() < 2 || (x.dim(-1) != 1 && x.dim(-1) != 2)) throw_bad_input(w + ": input must end in a dim of 1 (real) or 2 (complex)");
    const int64_t axis = normalize_axis(axis_, x.rank() - 1, w);
    const int64_t n = x.dim(static_cast<int>(axis));
    int64_t len = n;
    if (const Tensor* l = optional_input(ctx, 1); l && l->numel()) len = l->as_int64(0);
    if (len <= 0) throw_bad_input(w + ": dft_length must be positive");
    const int64_t bins = onesided_ ? len / 2 + 1 : len;
    Shape out = x.shape();
    out[axis] = bins;
    out.back() = 2;
    Tensor& y = ctx.output(0, out, x.dtype());
    const int64_t comps = x.dim(-1);
    const int64_t outer = dims_product(x.shape(), 0, axis), inner = dims_product(x.shape(), axis + 1, x.rank() - 1);
    dispatch_float(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      std::vector<double> re(n), im(n), ore(bins), oim(bins);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          for (int64_t k = 0; k < n; ++k) {
            const int64_t off = ((o * n + k) * inner + i) * comps;
            re[k] = static_cast<double>(px[off]);
            im[k] = comps == 2 ? static_cast<double>(px[off + 1]) : 0.0;
          }
          dft_1d(re.data(), im.data(), n, len, bins, inverse_, ore.data(), oim.data());
          for (int64_t k = 0; k < bins; ++k) {
            const int64_t off = ((o * bins + k) * inner + i) * 2;
            py[off] = static_cast<T>(ore[k]);
            py[off + 1] = static_cast<T>(oim[k]);
          }
        }
    });
  }

 private:
  int64_t axis_;
  bool inverse_, onesided_;
};

// STFT: signal [batch, length, 1|2], frame_step, optional window [L], optional frame_length.
// Output [batch, frames, bins, 2], frames = (length - L) / step + 1, bins = L/2+1 when onesided.
class STFTKernel : public Kernel {
 public:
  explicit STFTKernel(const KernelInfo& info) : onesided_(info.n().attr_int("onesided", 1) != 0) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2)) throw_bad_input(w + ": signal must be [batch, length, 1|2]");
    const int64_t step = required_input(ctx, 1).as_int64(0);
    const Tensor* window = optional_input(ctx, 2);
    const Tensor* fl = optional_input(ctx, 3);
    int64_t L = window ? window->numel() : 0;
    if (fl && fl->numel()) L = fl->as_int64(0);
    if (L <= 0 || step <= 0) throw_bad_input(w + ": frame_length (or window) and frame_step must be positive");
    if (window && window->numel() != L) throw_bad_input(w + ": window length differs from frame_length");
    const int64_t B = x.dim(0), len = x.dim(1), comps = x.dim(2);
    if (len < L) throw_bad_input(w + ": signal shorter than a frame");
    const int64_t frames = (len - L) / step + 1, bins = onesided_ ? L / 2 + 1 : L;
    Tensor& y = ctx.output(0, {B, frames, bins, 2}, x.dtype());
    dispatch_float(x.dtype(), w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      std::vector<double> re(L), im(L), ore(bins), oim(bins);
      for (int64_t b = 0; b < B; ++b)
        for (int64_t f = 0; f < frames; ++f) {
          for (int64_t k = 0; k < L; ++k) {
            const double wk = window ? window->as_double(k) : 1.0;
            const int64_t off = (b * len + f * step + k) * comps;
            re[k] = static_cast<double>(px[off]) * wk;
            im[k] = comps == 2 ? static_cast<double>(px[off + 1]) * wk : 0.0;
          }
          dft_1d(re.data(), im.data(), L, L, bins, false, ore.data(), oim.data());
          for (int64_t k = 0; k < bins; ++k) {
            py[((b * frames + f) * bins + k) * 2] = static_cast<T>(ore[k]);
            py[((b * frames + f) * bins + k) * 2 + 1] = static_cast<T>(oim[k]);
          }
        }
    });
  }

 private:
  bool onesided_;
};

// MelWeightMatrix: [dft_length/2 + 1, num_mel_bins] triangular filters between mel-spaced
// points of [lower_edge_hertz, upper_edge_hertz], mapped to DFT bins as ONNX's reference does.
class MelWeightMatrixKernel : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const KernelInfo& info)
      : dtype_(static_cast<DataType>(info.n().attr_int("output_datatype", static_cast<int64_t>(DataType::Float)))) {}
  void compute(KernelContext& ctx) override {
    const std::string w = ctx.where();
    const int64_t mels = required_input(ctx, 0).as_int64(0), dft = required_input(ctx, 1).as_int64(0),
                  rate = required_input(ctx, 2).as_int64(0);
    const double lo = required_input(ctx, 3).as_double(0), hi = required_input(ctx, 4).as_double(0);
    if (mels <= 0 || dft <= 0 || rate <= 0) throw_bad_input(w + ": num_mel_bins, dft_length and sample_rate must be positive");
    const int64_t spec = dft / 2 + 1;
    const double lo_mel = 2595 * std::log10(1 + lo / 700), hi_mel = 2595 * std::log10(1 + hi / 700);
    // ONNX's reference spaces num_mel_bins + 2 points by (hi - lo) / (num_mel_bins + 2), so the
    // last point stays below upper_edge_hertz; the test data follows it.
    const double mel_step = (hi_mel - lo_mel) / static_cast<double>(mels + 2);
    std::vector<int64_t> bin(mels + 2);
    for (int64_t i = 0; i < mels + 2; ++i) {
      const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * mel_step + lo_mel) / 2595) - 1);
      bin[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
    }
    std::vector<double> m(static_cast<size_t>(spec * mels), 0.0);
    auto at = [&](int64_t r, int64_t c) -> double& {
      if (r < 0 || r >= spec) throw_bad_input(w + ": mel band edge falls outside the spectrogram bins");
      return m[r * mels + c];
    };
    for (int64_t i = 0; i < mels; ++i) {
      const int64_t l = bin[i], c = bin[i + 1], r = bin[i + 2];
      if (c - l == 0) at(c, i) = 1;
      else
        for (int64_t j = l; j <= c; ++j) at(j, i) = static_cast<double>(j - l) / static_cast<double>(c - l);
      if (r - c > 0)
        for (int64_t j = c; j < r; ++j) at(j, i) = static_cast<double>(r - j) / static_cast<double>(r - c);
    }
    Tensor& y = ctx.output(0, {spec, mels}, dtype_);
    dispatch_numeric(dtype_, w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t i = 0; i < m.size(); ++i) y.data<T>()[i] = static_cast<T>(m[i]);
    });
  }

 private:
  DataType dtype_;
};

}  // namespace

void register_signal_kernels(KernelRegistry& r) {
  add_reference_kernel<DFTKernel>(r, "DFT");
  add_reference_kernel<STFTKernel>(r, "STFT");
  add_reference_kernel<MelWeightMatrixKernel>(r, "MelWeightMatrix");
}

}  // namespace fusor
