// Hand-checked cases for the shape/layout/indexing reference kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

std::vector<double> iota_values(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

Tensor iota_f(Shape s) {
  Tensor t(DataType::Float, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

Tensor ints(std::vector<int64_t> v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); }

TEST(RefTensor, ReshapeZeroMinusOneAllowzero) {
  Tensor x = iota_f({2, 3, 4});
  Tensor s = ints({0, -1});
  auto y = run_op("Reshape", {&x, &s});
  EXPECT_EQ(y[0].shape(), (Shape{2, 12}));
  EXPECT_EQ(y[0].raw(), x.raw());  // a view, no copy
  Tensor z = ints({0, 24});
  Tensor empty(DataType::Float, {0, 3});
  EXPECT_EQ(run_op("Reshape", {&empty, &z}, {Attribute::make_int("allowzero", 1)}, 1, 14)[0].shape(), (Shape{0, 24}));
  Tensor bad = ints({5, -1});
  EXPECT_THROW(run_op("Reshape", {&x, &bad}), Error);
}

TEST(RefTensor, SqueezeUnsqueezeFlattenForms) {
  Tensor x = iota_f({1, 3, 1, 2});
  EXPECT_EQ(run_op("Squeeze", {&x}, {}, 1, 13)[0].shape(), (Shape{3, 2}));
  Tensor ax = ints({-2});
  EXPECT_EQ(run_op("Squeeze", {&x, &ax}, {}, 1, 13)[0].shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(run_op("Squeeze", {&x}, {Attribute::make_ints("axes", {0})}, 1, 11)[0].shape(), (Shape{3, 1, 2}));
  Tensor bad = ints({1});
  EXPECT_THROW(run_op("Squeeze", {&x, &bad}, {}, 1, 13), Error);
  Tensor v = iota_f({3});
  Tensor uax = ints({0, -1});
  EXPECT_EQ(run_op("Unsqueeze", {&v, &uax}, {}, 1, 13)[0].shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(run_op("Unsqueeze", {&v}, {Attribute::make_ints("axes", {1})}, 1, 11)[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(run_op("Flatten", {&x}, {Attribute::make_int("axis", 2)})[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(run_op("Flatten", {&x}, {Attribute::make_int("axis", 0)})[0].shape(), (Shape{1, 6}));
}

TEST(RefTensor, ViewOpsDeclareAliases) {
  for (const char* op : {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Dropout"}) {
    OneNode one(op, 2, 1);
    KernelInfo info;
    info.graph = &one.graph;
    info.node = &one.node();
    info.opset = 13;
    EXPECT_EQ(KernelRegistry::global().create(info, "reference")->alias_of(0), 0) << op;
  }
}

TEST(RefTensor, DropoutInferenceMask) {
  Tensor x = iota_f({3});
  auto y = run_op("Dropout", {&x}, {}, 2, 13);
  EXPECT_EQ(values(y[0]), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(y[1].dtype(), DataType::Bool);
  EXPECT_EQ(values(y[1]), (std::vector<double>{1, 1, 1}));
  auto old = run_op("Dropout", {&x}, {Attribute::make_float("ratio", 0.3f)}, 2, 7);  // mask has X's type
  EXPECT_EQ(old[1].dtype(), DataType::Float);
  EXPECT_EQ(values(old[1]), (std::vector<double>{1, 1, 1}));
  Tensor ratio = Tensor::scalar<float>(0.5f);
  Tensor off = Tensor::scalar<bool>(false);
  auto same = run_op("Dropout", {&x, &ratio, &off}, {}, 2, 13);  // training_mode false: a copy
  EXPECT_EQ(values(same[0]), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values(same[1]), (std::vector<double>{1, 1, 1}));
}

// Training mode: kept elements scaled by 1 / (1 - ratio), the others 0, the mask saying which;
// about 1 - ratio of them kept; with a seed the first run is the same in every kernel made; a
// ratio outside [0, 1] is bad input. (The exact values, numpy's,
// are checked by ONNX's test_training_dropout* node tests in the conformance run.)
TEST(RefTensor, DropoutTrainingModeDrawsAMask) {
  const int64_t n = 4000;
  Tensor x = iota_f({n});
  Tensor ratio = Tensor::scalar<float>(0.75f);
  Tensor on = Tensor::scalar<bool>(true);
  std::vector<Attribute> seed = {Attribute::make_int("seed", 7)};
  OneNode one("Dropout", 3, 2, seed);
  KernelInfo info;
  info.graph = &one.graph;
  info.node = &one.node();
  info.opset = 13;
  EXPECT_EQ(KernelRegistry::global().create(info, "reference")->alias_of(0), -1);  // not a view
  auto a = run_op("Dropout", {&x, &ratio, &on}, seed, 2, 13);
  auto b = run_op("Dropout", {&x, &ratio, &on}, seed, 2, 13);
  EXPECT_TRUE(a[0].bit_equal(b[0]));
  EXPECT_TRUE(a[1].bit_equal(b[1]));
  int64_t kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    const bool k = a[1].as_double(i) != 0;
    kept += k;
    EXPECT_EQ(a[0].as_double(i), k ? 4.0 * static_cast<double>(i) : 0.0) << "element " << i;
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.25, 0.03);
  Tensor bad = Tensor::scalar<float>(1.5f);
  EXPECT_THROW(run_op("Dropout", {&x, &bad, &on}, seed, 2, 13), Error);
}

TEST(RefTensor, TransposeDefaultAndPerm) {
  Tensor x = iota_f({2, 3});
  auto t = run_op("Transpose", {&x});
  EXPECT_EQ(t[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values(t[0]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor y = iota_f({2, 3, 4});
  auto p = run_op("Transpose", {&y}, {Attribute::make_ints("perm", {1, 2, 0})});
  EXPECT_EQ(p[0].shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(p[0].data<float>()[1], 12);  // (0,0,1) <- y(1,0,0)
  EXPECT_EQ(p[0].data<float>()[2], 1);   // (0,1,0) <- y(0,0,1)
}

TEST(RefTensor, ConcatAndSplitRoundTrip) {
  Tensor a = iota_f({2, 1});
  Tensor b = iota_f({2, 2});
  auto c = run_op("Concat", {&a, &b}, {Attribute::make_int("axis", -1)});
  EXPECT_EQ(c[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(c[0]), (std::vector<double>{0, 0, 1, 1, 2, 3}));
  Tensor sizes = ints({1, 2});
  auto parts = run_op("Split", {&c[0], &sizes}, {Attribute::make_int("axis", 1)}, 2, 13);
  EXPECT_EQ(values(parts[0]), values(a));
  EXPECT_EQ(values(parts[1]), values(b));
  auto old = run_op("Split", {&c[0]}, {Attribute::make_int("axis", 1), Attribute::make_ints("split", {2, 1})}, 2, 11);
  EXPECT_EQ(old[1].shape(), (Shape{2, 1}));
  Tensor e = iota_f({6});
  auto eq = run_op("Split", {&e}, {}, 3, 13);
  EXPECT_EQ(values(eq[2]), (std::vector<double>{4, 5}));
}

TEST(RefTensor, SliceClampsAndSteps) {
  Tensor x = iota_f({10});
  Tensor s = ints({-3}), e = ints({1000});
  EXPECT_EQ(values(run_op("Slice", {&x, &s, &e})[0]), (std::vector<double>{7, 8, 9}));
  Tensor s2 = ints({8}), e2 = ints({-1000}), ax = ints({0}), st = ints({-3});
  EXPECT_EQ(values(run_op("Slice", {&x, &s2, &e2, &ax, &st})[0]), (std::vector<double>{8, 5, 2}));
  auto old = run_op("Slice", {&x}, {Attribute::make_ints("starts", {2}), Attribute::make_ints("ends", {4})}, 1, 9);
  EXPECT_EQ(values(old[0]), (std::vector<double>{2, 3}));
  Tensor empty(DataType::Float, {0, 2});
  Tensor es = ints({-1}), ee = ints({-100}), eax = ints({0}), est = ints({-1});
  EXPECT_EQ(run_op("Slice", {&empty, &es, &ee, &eax, &est})[0].shape(), (Shape{0, 2}));
  Tensor m = iota_f({3, 4});
  Tensor ms = ints({1}), me = ints({3}), max = ints({1});
  auto cols = run_op("Slice", {&m, &ms, &me, &max});
  EXPECT_EQ(cols[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values(cols[0]), (std::vector<double>{1, 2, 5, 6, 9, 10}));
}

TEST(RefTensor, GatherFamilies) {
  Tensor x = iota_f({3, 2});
  Tensor idx = Tensor::from_vector<int64_t>({2}, {2, -3});
  auto g = run_op("Gather", {&x, &idx});
  EXPECT_EQ(g[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(g[0]), (std::vector<double>{4, 5, 0, 1}));
  Tensor oob = Tensor::from_vector<int64_t>({1}, {3});
  EXPECT_THROW(run_op("Gather", {&x, &oob}), Error);
  Tensor ei = Tensor::from_vector<int64_t>({1, 2}, {1, 0});
  EXPECT_EQ(values(run_op("GatherElements", {&x, &ei}, {Attribute::make_int("axis", 1)})[0]), (std::vector<double>{1, 0}));
  Tensor wide = Tensor::from_vector<int64_t>({1, 3}, {0, 0, 0});  // 3 columns > the data's 2
  EXPECT_THROW(run_op("GatherElements", {&x, &wide}, {Attribute::make_int("axis", 0)}), Error);
  Tensor nd = Tensor::from_vector<int64_t>({2, 2}, {2, 1, 0, 0});
  EXPECT_EQ(values(run_op("GatherND", {&x, &nd})[0]), (std::vector<double>{5, 0}));
}

TEST(RefTensor, ScatterFamilies) {
  Tensor x = iota_f({4});
  Tensor idx = Tensor::from_vector<int64_t>({2, 1}, {1, 3});
  Tensor upd = Tensor::from_vector<float>({2}, {10, 20});
  EXPECT_EQ(values(run_op("ScatterND", {&x, &idx, &upd})[0]), (std::vector<double>{0, 10, 2, 20}));
  EXPECT_EQ(values(run_op("ScatterND", {&x, &idx, &upd}, {Attribute::make_string("reduction", "add")}, 1, 16)[0]),
            (std::vector<double>{0, 11, 2, 23}));
  Tensor m = iota_f({2, 2});
  Tensor ei = Tensor::from_vector<int64_t>({1, 2}, {1, 0});
  Tensor eu = Tensor::from_vector<float>({1, 2}, {7, 8});
  EXPECT_EQ(values(run_op("ScatterElements", {&m, &ei, &eu})[0]), (std::vector<double>{0, 8, 7, 3}));
  EXPECT_EQ(values(run_op("ScatterElements", {&m, &ei, &eu}, {Attribute::make_string("reduction", "mul")}, 1, 16)[0]),
            (std::vector<double>{0, 8, 14, 3}));
}

TEST(RefTensor, ExpandTilePad) {
  Tensor x = Tensor::from_vector<float>({2, 1}, {1, 2});
  Tensor s = ints({2, 3});
  EXPECT_EQ(values(run_op("Expand", {&x, &s})[0]), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  Tensor r = ints({2, 2});
  auto t = run_op("Tile", {&x, &r});
  EXPECT_EQ(t[0].shape(), (Shape{4, 2}));
  EXPECT_EQ(values(t[0]), (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2}));
  Tensor v = Tensor::from_vector<float>({3}, {1, 2, 3});
  Tensor pads = ints({2, 1});
  Tensor cv = Tensor::scalar<float>(9);
  EXPECT_EQ(values(run_op("Pad", {&v, &pads, &cv})[0]), (std::vector<double>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(values(run_op("Pad", {&v, &pads}, {Attribute::make_string("mode", "reflect")})[0]), (std::vector<double>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(values(run_op("Pad", {&v, &pads}, {Attribute::make_string("mode", "edge")})[0]), (std::vector<double>{1, 1, 1, 2, 3, 3}));
  auto old = run_op("Pad", {&v}, {Attribute::make_ints("pads", {1, 0}), Attribute::make_float("value", 5)}, 1, 2);
  EXPECT_EQ(values(old[0]), (std::vector<double>{5, 1, 2, 3}));
  Tensor crop = ints({-1, 0});
  EXPECT_EQ(values(run_op("Pad", {&v, &crop})[0]), (std::vector<double>{2, 3}));
}

// Nearest resize of a blocked tensor [N, CB, H, W, 16] whose lanes are not resized (copied as runs
// of 16), and of one whose last dim is resized (element by element), up and down, against the
// definition written out: y[i...] = x[floor(i_d / scale_d)...] (asymmetric, floor).
TEST(RefTensor, ResizeNearestRunsOfUnresizedDimsMatchTheDefinition) {
  struct Case {
    Shape in;
    std::vector<float> scales;
  };
  const Case cases[] = {{{1, 2, 5, 7, 16}, {1, 1, 2, 2, 1}},
                        {{2, 3, 4, 6, 16}, {1, 1, 0.5f, 0.5f, 1}},
                        {{1, 3, 5, 4}, {1, 1, 3, 2}},
                        {{2, 1, 3, 40, 8}, {1, 2, 1, 1, 1}}};
  for (const Case& c : cases) {
    std::vector<float> xv(static_cast<size_t>(shape_numel(c.in)));
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i);
    const Tensor x = Tensor::from_vector<float>(c.in, xv);
    const Tensor scales = Tensor::from_vector<float>({static_cast<int64_t>(c.scales.size())}, c.scales);
    const auto y = run_op("Resize", {&x, nullptr, &scales},
                          {Attribute::make_string("mode", "nearest"), Attribute::make_string("coordinate_transformation_mode", "asymmetric"),
                           Attribute::make_string("nearest_mode", "floor")}, 1, 13)[0];
    const int rank = static_cast<int>(c.in.size());
    Shape out(rank);
    for (int d = 0; d < rank; ++d) out[d] = static_cast<int64_t>(std::floor(c.in[d] * static_cast<double>(c.scales[d])));
    ASSERT_EQ(y.shape(), out) << shape_str(c.in);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < y.numel(); ++i) {
      int64_t src = 0;
      for (int d = 0; d < rank; ++d)
        src = src * c.in[d] + std::min<int64_t>(c.in[d] - 1, static_cast<int64_t>(std::floor(idx[d] / static_cast<double>(c.scales[d]))));
      ASSERT_EQ(y.data<float>()[i], xv[static_cast<size_t>(src)]) << shape_str(c.in) << " output " << i;
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < out[d]) break;
        idx[d] = 0;
      }
    }
  }
}

TEST(RefTensor, ResizeNearestAndLinear) {
  Tensor x = Tensor::from_vector<float>({1, 1, 1, 2}, {1, 2});
  Tensor scales = Tensor::from_vector<float>({4}, {1, 1, 1, 2});
  auto n = run_op("Resize", {&x, nullptr, &scales}, {Attribute::make_string("mode", "nearest")}, 1, 13);
  EXPECT_EQ(n[0].shape(), (Shape{1, 1, 1, 4}));
  EXPECT_EQ(values(n[0]), (std::vector<double>{1, 1, 2, 2}));
  auto l = run_op("Resize", {&x, nullptr, &scales}, {Attribute::make_string("mode", "linear")}, 1, 13);
  // half_pixel: x_ori = (o + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 -> edge-clamped lerp
  EXPECT_EQ(values(l[0]), (std::vector<double>{1, 1.25, 1.75, 2}));
  auto ac = run_op("Resize", {&x, nullptr, &scales}, {Attribute::make_string("mode", "linear"),
                   Attribute::make_string("coordinate_transformation_mode", "align_corners")}, 1, 13);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(ac[0].data<float>()[i], 1 + i / 3.0, 1e-6);
  EXPECT_THROW(run_op("Resize", {&x, nullptr, &scales}, {Attribute::make_int("antialias", 1)}, 1, 18), Error);
  Tensor up = Tensor::from_vector<float>({4}, {1, 1, 2, 3});
  auto u = run_op("Upsample", {&x, &up}, {}, 1, 9);
  EXPECT_EQ(u[0].shape(), (Shape{1, 1, 2, 6}));
  EXPECT_EQ(values(u[0]), (std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2}));
}

TEST(RefTensor, ShapeSizeConstantOfShapeRangeEyeLike) {
  Tensor x = iota_f({2, 3, 4});
  EXPECT_EQ(values(run_op("Shape", {&x})[0]), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(values(run_op("Shape", {&x}, {Attribute::make_int("start", -2)}, 1, 15)[0]), (std::vector<double>{3, 4}));
  EXPECT_EQ(run_op("Size", {&x})[0].data<int64_t>()[0], 24);
  Tensor s = ints({2, 2});
  auto c = run_op("ConstantOfShape", {&s}, {Attribute::make_tensor("value", std::make_shared<Tensor>(Tensor::from_vector<int64_t>({1}, {7})))});
  EXPECT_EQ(c[0].dtype(), DataType::Int64);
  EXPECT_EQ(values(c[0]), (std::vector<double>{7, 7, 7, 7}));
  Tensor a = Tensor::scalar<float>(1), b = Tensor::scalar<float>(2), d = Tensor::scalar<float>(0.25f);
  EXPECT_EQ(values(run_op("Range", {&a, &b, &d})[0]), (std::vector<double>{1, 1.25, 1.5, 1.75}));
  Tensor ia = Tensor::scalar<int32_t>(10), ib = Tensor::scalar<int32_t>(4), id = Tensor::scalar<int32_t>(-3);
  EXPECT_EQ(values(run_op("Range", {&ia, &ib, &id})[0]), (std::vector<double>{10, 7}));
  Tensor e = iota_f({2, 3});
  EXPECT_EQ(values(run_op("EyeLike", {&e}, {Attribute::make_int("k", 1)})[0]), (std::vector<double>{0, 1, 0, 0, 0, 1}));
  auto k = run_op("Constant", {}, {Attribute::make_ints("value_ints", {3, 4})});
  EXPECT_EQ(values(k[0]), (std::vector<double>{3, 4}));
}

TEST(RefTensor, IndexOps) {
  Tensor x = Tensor::from_vector<float>({2, 2}, {0, 3, 4, 0});
  auto nz = run_op("NonZero", {&x});
  EXPECT_EQ(nz[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values(nz[0]), (std::vector<double>{0, 1, 1, 0}));
  Tensor idx = Tensor::from_vector<int64_t>({2}, {1, -1});
  Tensor depth = Tensor::scalar<int64_t>(3);
  Tensor vals = Tensor::from_vector<float>({2}, {0, 5});
  EXPECT_EQ(values(run_op("OneHot", {&idx, &depth, &vals})[0]), (std::vector<double>{0, 5, 0, 0, 0, 5}));
  Tensor m = iota_f({3, 3});
  EXPECT_EQ(values(run_op("Trilu", {&m})[0]), (std::vector<double>{0, 1, 2, 0, 4, 5, 0, 0, 8}));
  Tensor k = Tensor::scalar<int64_t>(-1);
  EXPECT_EQ(values(run_op("Trilu", {&m, &k}, {Attribute::make_int("upper", 0)})[0]), (std::vector<double>{0, 0, 0, 3, 0, 0, 6, 7, 0}));
  Tensor cond = Tensor::from_vector<bool>({3}, {false, true, true});
  auto cp = run_op("Compress", {&m, &cond}, {Attribute::make_int("axis", 1)});
  EXPECT_EQ(values(cp[0]), (std::vector<double>{1, 2, 4, 5, 7, 8}));
  Tensor u = Tensor::from_vector<float>({5}, {2, 1, 2, 3, 1});
  auto un = run_op("Unique", {&u}, {}, 4);
  EXPECT_EQ(values(un[0]), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(values(un[1]), (std::vector<double>{1, 0, 3}));
  EXPECT_EQ(values(un[2]), (std::vector<double>{1, 0, 1, 2, 0}));
  EXPECT_EQ(values(un[3]), (std::vector<double>{2, 2, 1}));
}

TEST(RefTensor, DepthToSpaceInvertsSpaceToDepth) {
  Tensor x = iota_f({1, 2, 2, 4});
  auto d = run_op("SpaceToDepth", {&x}, {Attribute::make_int("blocksize", 2)});
  EXPECT_EQ(d[0].shape(), (Shape{1, 8, 1, 2}));
  EXPECT_EQ(d[0].data<float>()[0], 0);
  EXPECT_EQ(d[0].data<float>()[1], 2);  // channel 0 = (c0, dy0, dx0) at w=0,1 -> x[0,0,0,0], x[0,0,0,2]
  auto back = run_op("DepthToSpace", {&d[0]}, {Attribute::make_int("blocksize", 2)});
  EXPECT_EQ(back[0].shape(), x.shape());
  EXPECT_EQ(values(back[0]), iota_values(16));
}

TEST(RefTensor, ReverseSequence) {
  Tensor x = iota_f({3, 2});  // time x batch
  Tensor lens = Tensor::from_vector<int64_t>({2}, {3, 2});
  EXPECT_EQ(values(run_op("ReverseSequence", {&x, &lens})[0]), (std::vector<double>{4, 3, 2, 1, 0, 5}));
}

}  // namespace
}  // namespace fusor::test
