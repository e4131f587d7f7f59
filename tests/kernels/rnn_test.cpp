// LSTM / GRU / RNN: against torch (tests/kernels/data/make_rnn_fixtures.py), hand-computed steps,
// and consistency of layout=1 and sequence_lens with the plain forms.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/onnx/tensor_io.h"
#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

const std::string kFixtures = std::string(FUSOR_SOURCE_DIR) + "/tests/kernels/data/rnn_torch/";

Tensor fixture(const std::string& c, const std::string& name) { return read_tensor_file(kFixtures + c + "/" + name + ".pb"); }

void expect_close(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want.data<float>()[i], tol) << what << " element " << i;
}

std::vector<Tensor> run_cell(const std::string& op, const std::vector<const Tensor*>& in, std::vector<Attribute> attrs, int outs) {
  return run_op(op, in, std::move(attrs), outs, 14);
}

TEST(RnnTorch, BidirectionalLstmGruRnn) {
  for (const std::string op : {"LSTM", "GRU", "RNN"}) {
    std::string c = op == "LSTM" ? "lstm_bidirectional" : op == "GRU" ? "gru_bidirectional" : "rnn_bidirectional";
    Tensor x = fixture(c, "X"), w = fixture(c, "W"), r = fixture(c, "R"), b = fixture(c, "B"), h0 = fixture(c, "initial_h");
    std::vector<Attribute> attrs{Attribute::make_int("hidden_size", 4), Attribute::make_string("direction", "bidirectional")};
    if (op == "GRU") attrs.push_back(Attribute::make_int("linear_before_reset", 1));
    std::vector<const Tensor*> in{&x, &w, &r, &b, nullptr, &h0};
    Tensor c0;
    if (op == "LSTM") {
      c0 = fixture(c, "initial_c");
      in.push_back(&c0);
    }
    auto y = run_cell(op, in, attrs, op == "LSTM" ? 3 : 2);
    expect_close(y[0], fixture(c, "Y"), 1e-5, op + " Y");
    expect_close(y[1], fixture(c, "Y_h"), 1e-5, op + " Y_h");
    if (op == "LSTM") expect_close(y[2], fixture(c, "Y_c"), 1e-5, "LSTM Y_c");
  }
}

TEST(RnnHand, TwoStepsOfASimpleRnnAndClip) {
  Tensor x = Tensor::from_vector<float>({2, 1, 1}, {1, 2});
  Tensor w = Tensor::from_vector<float>({1, 1, 1}, {0.5f});
  Tensor r = Tensor::from_vector<float>({1, 1, 1}, {0.25f});
  Tensor b = Tensor::from_vector<float>({1, 2}, {0.1f, 0.2f});
  auto y = run_cell("RNN", {&x, &w, &r, &b}, {Attribute::make_int("hidden_size", 1)}, 2);
  const double h1 = std::tanh(0.5 + 0.3), h2 = std::tanh(1.0 + 0.25 * h1 + 0.3);
  EXPECT_NEAR(y[0].data<float>()[0], h1, 1e-6);
  EXPECT_NEAR(y[0].data<float>()[1], h2, 1e-6);
  EXPECT_NEAR(y[1].data<float>()[0], h2, 1e-6);
  // Relu with clip 1: pre-activations 0.8 and 1.0 + 0.25 * 0.8 + 0.3 = 1.5 -> clipped to 1.
  auto yc = run_cell("RNN", {&x, &w, &r, &b},
                     {Attribute::make_int("hidden_size", 1), Attribute::make_strings("activations", {"Relu"}),
                      Attribute::make_float("clip", 1.0f)}, 2);
  EXPECT_NEAR(yc[0].data<float>()[0], 0.8, 1e-6);
  EXPECT_NEAR(yc[0].data<float>()[1], 1.0, 1e-6);
}

// [S, B, I] <-> [B, S, I] and friends.
Tensor swap01(const Tensor& t) {
  Shape s = t.shape();
  std::swap(s[0], s[1]);
  Tensor o(t.dtype(), s);
  const int64_t inner = t.numel() / (s[0] * s[1]);
  for (int64_t i = 0; i < s[1]; ++i)
    for (int64_t j = 0; j < s[0]; ++j)
      for (int64_t k = 0; k < inner; ++k) o.data<float>()[(j * s[1] + i) * inner + k] = t.data<float>()[(i * s[0] + j) * inner + k];
  return o;
}

TEST(RnnLayout, BatchFirstMatchesSequenceFirst) {
  const std::string c = "lstm_bidirectional";
  Tensor x = fixture(c, "X"), w = fixture(c, "W"), r = fixture(c, "R"), b = fixture(c, "B");
  Tensor h0 = fixture(c, "initial_h"), c0 = fixture(c, "initial_c");
  std::vector<Attribute> attrs{Attribute::make_int("hidden_size", 4), Attribute::make_string("direction", "bidirectional")};
  auto ref = run_cell("LSTM", {&x, &w, &r, &b, nullptr, &h0, &c0}, attrs, 3);
  Tensor xb = swap01(x), hb = swap01(h0), cb = swap01(c0);
  attrs.push_back(Attribute::make_int("layout", 1));
  auto got = run_cell("LSTM", {&xb, &w, &r, &b, nullptr, &hb, &cb}, attrs, 3);
  // Y: [S, D, B, H] vs [B, S, D, H].
  const Shape& ys = ref[0].shape();
  ASSERT_EQ(got[0].shape(), (Shape{ys[2], ys[0], ys[1], ys[3]}));
  for (int64_t s = 0; s < ys[0]; ++s)
    for (int64_t d = 0; d < ys[1]; ++d)
      for (int64_t bb = 0; bb < ys[2]; ++bb)
        for (int64_t h = 0; h < ys[3]; ++h)
          EXPECT_EQ(got[0].data<float>()[((bb * ys[0] + s) * ys[1] + d) * ys[3] + h],
                    ref[0].data<float>()[((s * ys[1] + d) * ys[2] + bb) * ys[3] + h]);
  expect_close(got[1], swap01(ref[1]), 0, "Y_h");
  expect_close(got[2], swap01(ref[2]), 0, "Y_c");
}

// A batch element with sequence length L behaves as if its sequence were truncated to L steps;
// Y is zero beyond L.
TEST(RnnSequenceLens, ShortSequenceEqualsTruncatedInput) {
  const std::string c = "gru_bidirectional";
  Tensor x = fixture(c, "X"), w = fixture(c, "W"), r = fixture(c, "R"), b = fixture(c, "B"), h0 = fixture(c, "initial_h");
  const int64_t S = x.dim(0), B = x.dim(1), I = x.dim(2), H = 4;
  std::vector<Attribute> attrs{Attribute::make_int("hidden_size", H), Attribute::make_string("direction", "bidirectional")};
  Tensor lens = Tensor::from_vector<int32_t>({B}, {static_cast<int32_t>(S), 3});
  auto got = run_cell("GRU", {&x, &w, &r, &b, &lens, &h0}, attrs, 2);
  // Batch element 1 alone, first 3 steps.
  Tensor x1(DataType::Float, {3, 1, I}), h1(DataType::Float, {2, 1, H});
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t i = 0; i < I; ++i) x1.data<float>()[t * I + i] = x.data<float>()[(t * B + 1) * I + i];
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t h = 0; h < H; ++h) h1.data<float>()[d * H + h] = h0.data<float>()[(d * B + 1) * H + h];
  auto want = run_cell("GRU", {&x1, &w, &r, &b, nullptr, &h1}, attrs, 2);
  for (int64_t t = 0; t < S; ++t)
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t h = 0; h < H; ++h) {
        const float g = got[0].data<float>()[((t * 2 + d) * B + 1) * H + h];
        if (t < 3) EXPECT_EQ(g, want[0].data<float>()[(t * 2 + d) * H + h]);
        else EXPECT_EQ(g, 0.0f);
      }
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t h = 0; h < H; ++h) EXPECT_EQ(got[1].data<float>()[(d * B + 1) * H + h], want[1].data<float>()[d * H + h]);
  // Batch element 0 (full length) is unaffected by element 1's length.
  auto full = run_cell("GRU", {&x, &w, &r, &b, nullptr, &h0}, attrs, 2);
  for (int64_t h = 0; h < H; ++h) EXPECT_EQ(got[1].data<float>()[h], full[1].data<float>()[h]);
}

TEST(RnnErrors, BadShapesAndAttributes) {
  Tensor x = Tensor::from_vector<float>({2, 1, 1}, {1, 2});
  Tensor w = Tensor::from_vector<float>({1, 1, 1}, {0.5f});
  Tensor r_bad = Tensor::from_vector<float>({1, 2, 2}, {0, 0, 0, 0});
  EXPECT_THROW(run_cell("RNN", {&x, &w, &r_bad}, {Attribute::make_int("hidden_size", 1)}, 2), Error);
  Tensor r = Tensor::from_vector<float>({1, 1, 1}, {0.25f});
  EXPECT_THROW(run_cell("RNN", {&x, &w, &r}, {Attribute::make_int("hidden_size", 1), Attribute::make_string("direction", "sideways")}, 2),
               Error);
  Tensor lens = Tensor::from_vector<int32_t>({1}, {5});
  EXPECT_THROW(run_cell("RNN", {&x, &w, &r, nullptr, &lens}, {Attribute::make_int("hidden_size", 1)}, 2), Error);
}

}  // namespace
}  // namespace fusor::test
