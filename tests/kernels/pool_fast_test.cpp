// The fast 2-D pool kernels (kernels/pool) against the reference kernels, through the registry:
// MaxPool and AveragePool (NCHW), NhwcMaxPool / NhwcAveragePool and NhwcGlobalAveragePool, over kernels, strides,
// dilations, asymmetric and auto pads, ceil_mode, count_include_pad, batch > 1, odd sizes.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/kernels/fused_test_util.h"

namespace fusor::test {
namespace {

struct PoolCase {
  const char* name;
  Shape x;  // N, C, H, W
  std::vector<int64_t> kernel, strides, dilations, pads;
  const char* auto_pad;
  int ceil_mode;
};

const PoolCase kCases[] = {
    {"resnet_stem", {1, 8, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, "NOTSET", 0},
    {"k2s2", {2, 3, 8, 10}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, "NOTSET", 0},
    {"k3s1_pad", {1, 5, 7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, "NOTSET", 0},
    {"asym_pads", {1, 4, 9, 6}, {3, 2}, {2, 1}, {1, 1}, {0, 1, 2, 0}, "NOTSET", 0},
    {"ceil_mode", {1, 3, 10, 11}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, "NOTSET", 1},
    {"ceil_pads", {1, 3, 9, 9}, {2, 2}, {2, 2}, {1, 1}, {1, 1, 1, 1}, "NOTSET", 1},
    {"dilated", {1, 2, 12, 13}, {3, 3}, {1, 2}, {2, 2}, {2, 2, 2, 2}, "NOTSET", 0},
    {"same_upper", {1, 6, 7, 8}, {3, 3}, {2, 2}, {1, 1}, {}, "SAME_UPPER", 0},
    {"same_lower", {1, 6, 7, 8}, {2, 2}, {1, 1}, {1, 1}, {}, "SAME_LOWER", 0},
    {"wide_kernel", {1, 2, 5, 17}, {1, 7}, {1, 3}, {1, 1}, {0, 3, 0, 3}, "NOTSET", 0},
    {"one_by_one", {1, 1, 1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, "NOTSET", 0},
};

std::vector<Attribute> attrs_of(const PoolCase& c, bool average, int count_include_pad) {
  std::vector<Attribute> a = {Attribute::make_ints("kernel_shape", c.kernel), Attribute::make_ints("strides", c.strides),
                              Attribute::make_string("auto_pad", c.auto_pad), Attribute::make_int("ceil_mode", c.ceil_mode)};
  if (!c.pads.empty()) a.push_back(Attribute::make_ints("pads", c.pads));
  if (average) a.push_back(Attribute::make_int("count_include_pad", count_include_pad));
  else a.push_back(Attribute::make_ints("dilations", c.dilations));  // AveragePool's dilations: opset 19
  return a;
}

Tensor run_onnx_pool(const std::string& op, const Tensor& x, std::vector<Attribute> attrs, std::string_view impl) {
  OneNode one(op, 1, 1, std::move(attrs));
  return run_kernel(KernelRegistry::global(), one.graph, one.node(), 18, {&x}, impl)[0];
}

void expect_same(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.shape(), got.shape()) << what;
  const float* a = want.data<float>();
  const float* b = got.data<float>();
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(a[i], b[i], 1e-5f * (1.f + std::fabs(a[i]))) << what << " at " << i;
}

TEST(FastPool, OnnxPoolsMatchReference) {
  uint32_t seed = 1;
  for (const PoolCase& c : kCases) {
    const Tensor x = rnd(c.x, seed++, -3.f, 3.f);
    expect_same(run_onnx_pool("MaxPool", x, attrs_of(c, false, 0), "reference"),
                run_onnx_pool("MaxPool", x, attrs_of(c, false, 0), "fast"), std::string("MaxPool ") + c.name);
    if (c.dilations[0] != 1 || c.dilations[1] != 1) continue;
    for (int cip : {0, 1})
      expect_same(run_onnx_pool("AveragePool", x, attrs_of(c, true, cip), "reference"),
                  run_onnx_pool("AveragePool", x, attrs_of(c, true, cip), "fast"),
                  std::string("AveragePool ") + c.name + " count_include_pad=" + std::to_string(cip));
  }
}

TEST(FastPool, NhwcPoolsMatchReference) {
  uint32_t seed = 100;
  for (const PoolCase& c : kCases) {
    const Shape nhwc = {c.x[0], c.x[2], c.x[3], c.x[1]};
    const Tensor x = rnd(nhwc, seed++, -3.f, 3.f);
    expect_same(fused("NhwcMaxPool", {x}, attrs_of(c, false, 0), "reference"),
                fused("NhwcMaxPool", {x}, attrs_of(c, false, 0), "fast"), std::string("NhwcMaxPool ") + c.name);
    if (c.dilations[0] != 1 || c.dilations[1] != 1) continue;
    for (int cip : {0, 1})
      expect_same(fused("NhwcAveragePool", {x}, attrs_of(c, true, cip), "reference"),
                  fused("NhwcAveragePool", {x}, attrs_of(c, true, cip), "fast"),
                  std::string("NhwcAveragePool ") + c.name + " count_include_pad=" + std::to_string(cip));
  }
}

// Channel counts that are multiples of 16 take the AVX-512 rows on a machine that has them
// (kernels/pool/pool2d_avx512.h, the blocked layout's pools): the same taps in the same order, so
// the results equal the reference's exactly.
TEST(FastPool, NhwcPoolsWithChannelsInSixteensMatchReferenceExactly) {
  uint32_t seed = 200;
  for (const PoolCase& c : kCases) {
    for (int64_t channels : {16, 48}) {
      const Shape nhwc = {c.x[0], c.x[2], c.x[3], channels};
      const Tensor x = rnd(nhwc, seed++, -3.f, 3.f);
      const std::string what = std::string(c.name) + " C=" + std::to_string(channels);
      const Tensor want = fused("NhwcMaxPool", {x}, attrs_of(c, false, 0), "reference");
      const Tensor got = fused("NhwcMaxPool", {x}, attrs_of(c, false, 0), "fast");
      ASSERT_EQ(want.shape(), got.shape()) << what;
      for (int64_t i = 0; i < want.numel(); ++i) ASSERT_EQ(want.data<float>()[i], got.data<float>()[i]) << what << " at " << i;
      if (c.dilations[0] != 1 || c.dilations[1] != 1) continue;
      for (int cip : {0, 1})
        expect_same(fused("NhwcAveragePool", {x}, attrs_of(c, true, cip), "reference"),
                    fused("NhwcAveragePool", {x}, attrs_of(c, true, cip), "fast"),
                    "NhwcAveragePool " + what + " count_include_pad=" + std::to_string(cip));
    }
  }
}

TEST(FastPool, NhwcGlobalAveragePoolMatchesReference) {
  uint32_t seed = 300;
  for (const Shape& nhwc : {Shape{1, 7, 7, 1280}, Shape{2, 5, 3, 17}, Shape{1, 1, 1, 4}, Shape{3, 11, 6}, Shape{1, 2, 3, 4, 5}}) {
    const Tensor x = rnd(nhwc, seed++, -3.f, 3.f);
    expect_same(fused("NhwcGlobalAveragePool", {x}, {}, "reference"), fused("NhwcGlobalAveragePool", {x}, {}, "fast"),
                "NhwcGlobalAveragePool " + shape_str(nhwc));
  }
}

TEST(FastPool, IndicesOutputAndOtherTypesFallBackToReference) {
  // MaxPool with Indices wanted: the fast kernel hands the call to the reference kernel.
  const Tensor x = rnd({1, 2, 6, 6}, 7);
  OneNode one("MaxPool", 1, 2, {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("strides", {2, 2})});
  auto fast = run_kernel(KernelRegistry::global(), one.graph, one.node(), 18, {&x}, "fast");
  auto ref = run_kernel(KernelRegistry::global(), one.graph, one.node(), 18, {&x}, "reference");
  ASSERT_TRUE(fast[1].defined());
  for (int64_t i = 0; i < ref[1].numel(); ++i) EXPECT_EQ(ref[1].data<int64_t>()[i], fast[1].data<int64_t>()[i]);
  // 1-D and double pools.
  const Tensor x1 = rnd({1, 3, 10}, 8);
  std::vector<Attribute> a1 = {Attribute::make_ints("kernel_shape", {3})};
  expect_same(run_onnx_pool("MaxPool", x1, a1, "reference"), run_onnx_pool("MaxPool", x1, a1, "fast"), "1-D");
  Tensor xd(DataType::Double, {1, 1, 4, 4});
  for (int64_t i = 0; i < 16; ++i) xd.data<double>()[i] = static_cast<double>((i * 7) % 16);
  const Tensor yd = run_onnx_pool("MaxPool", xd, {Attribute::make_ints("kernel_shape", {2, 2})}, "fast");
  EXPECT_EQ(yd.dtype(), DataType::Double);
  const double* pd = xd.data<double>();
  EXPECT_EQ(yd.data<double>()[0], std::max({pd[0], pd[1], pd[4], pd[5]}));
}

}  // namespace
}  // namespace fusor::test
