// The fast LSTM / GRU / RNN (kernels/rnn/recurrent.cpp) against the double-precision reference
// kernel: every direction, both layouts, batch sizes around the 4-row blocks, hidden sizes off the
// vector width, sequence_lens (including 0 and S), initial states, peepholes, clip, input_forget,
// linear_before_reset, biases absent; then the cases it hands to the reference kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "kernels/cpu_features.h"
#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {

struct Case {
  std::string op;  // LSTM, GRU, RNN
  int64_t S, B, I, H;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, lens = false, h0 = false, c0 = false, peep = false;
  std::vector<Attribute> extra;
  bool w_const = true;
};

Case mk(std::string op, int64_t S, int64_t B, int64_t I, int64_t H, std::string dir, int64_t layout = 0,
        bool bias = true, bool lens = false, bool h0 = false, bool c0 = false, bool peep = false) {
  Case c;
  c.op = std::move(op), c.S = S, c.B = B, c.I = I, c.H = H, c.direction = std::move(dir), c.layout = layout;
  c.bias = bias, c.lens = lens, c.h0 = h0, c.c0 = c0, c.peep = peep;
  return c;
}

int64_t gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

std::vector<Tensor> run_rnn(const Case& c, std::string_view impl, uint32_t seed) {
  const int64_t D = c.direction == "bidirectional" ? 2 : 1, G = gates(c.op);
  std::vector<Tensor> ins(8);
  ins[0] = rnd(c.layout ? Shape{c.B, c.S, c.I} : Shape{c.S, c.B, c.I}, seed);
  ins[1] = rnd({D, G * c.H, c.I}, seed + 1, -0.5f, 0.5f);
  ins[2] = rnd({D, G * c.H, c.H}, seed + 2, -0.5f, 0.5f);
  if (c.bias) ins[3] = rnd({D, 2 * G * c.H}, seed + 3);
  if (c.lens) {
    std::vector<int32_t> l;
    for (int64_t b = 0; b < c.B; ++b) l.push_back(static_cast<int32_t>((b * 3 + 1) % (c.S + 1)));
    l[0] = static_cast<int32_t>(c.S);
    ins[4] = Tensor::from_vector<int32_t>({c.B}, l);
  }
  const Shape state = c.layout ? Shape{c.B, D, c.H} : Shape{D, c.B, c.H};
  if (c.h0) ins[5] = rnd(state, seed + 4);
  if (c.c0) ins[6] = rnd(state, seed + 5);
  if (c.peep) ins[7] = rnd({D, 3 * c.H}, seed + 6);
  const size_t n_in = c.op == "LSTM" ? 8 : 6;
  ins.resize(n_in);
  while (!ins.empty() && !ins.back().defined()) ins.pop_back();
  std::vector<Attribute> attrs = c.extra;
  attrs.push_back(Attribute::make_int("hidden_size", c.H));
  attrs.push_back(Attribute::make_string("direction", c.direction));
  if (c.layout) attrs.push_back(Attribute::make_int("layout", 1));
  const std::vector<bool> constant = {false, c.w_const, c.w_const};
  return run_node(OpType::onnx(c.op), ins, attrs, impl, c.op == "LSTM" ? 3 : 2, constant, 14);
}

std::vector<Case> cases() {
  using A = Attribute;
  std::vector<Case> out;
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      out.push_back(mk(op, 7, 1, 5, 16, dir));
      out.push_back(mk(op, 5, 3, 8, 20, dir, 0, true, true, true, true));
      out.push_back(mk(op, 6, 6, 3, 37, dir, 1, false, false, true, false));
      out.push_back(mk(op, 4, 9, 4, 64, dir, 1, true, true, false, true));
    }
  Case peep = mk("LSTM", 6, 5, 7, 24, "bidirectional", 0, true, true, true, true, true);
  out.push_back(peep);
  Case clip = mk("LSTM", 5, 2, 4, 19, "forward");
  clip.extra = {A::make_float("clip", 0.7f)};
  clip.peep = true;
  out.push_back(clip);
  Case forget = mk("LSTM", 5, 4, 6, 33, "reverse", 0, true, true, true, true, true);
  forget.extra = {A::make_int("input_forget", 1)};
  out.push_back(forget);
  for (int lbr : {0, 1}) {
    Case gru = mk("GRU", 6, 5, 9, 40, "bidirectional", 0, true, true, true);
    gru.extra = {A::make_int("linear_before_reset", lbr), A::make_float("clip", 2.5f)};
    out.push_back(gru);
  }
  Case rnn_clip = mk("RNN", 8, 2, 3, 12, "forward");
  rnn_clip.extra = {A::make_float("clip", 0.5f)};
  out.push_back(rnn_clip);
  Case named = mk("LSTM", 4, 2, 3, 8, "bidirectional");
  named.extra = {A::make_strings("activations", {"Sigmoid", "TANH", "tanh"})};
  out.push_back(named);
  return out;
}

std::string describe(const Case& c) {
  return c.op + " " + c.direction + " S" + std::to_string(c.S) + " B" + std::to_string(c.B) + " I" +
         std::to_string(c.I) + " H" + std::to_string(c.H) + " layout" + std::to_string(c.layout) +
         (c.lens ? " lens" : "") + (c.h0 ? " h0" : "") + (c.c0 ? " c0" : "") + (c.peep ? " peep" : "") +
         (c.extra.empty() ? "" : " " + c.extra[0].name);
}

// Compares the fast kernel with the reference; returns the largest difference (0 when the fast
// kernel handed the call to the reference kernel).
double expect_same(const Case& c, double tol) {
  const std::vector<Tensor> want = run_rnn(c, "reference", 11), got = run_rnn(c, "fast", 11);
  EXPECT_EQ(want.size(), got.size());
  double worst = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    if (!got[i].defined()) {
      ADD_FAILURE() << describe(c) << " output " << i << " missing";
      continue;
    }
    EXPECT_TRUE(near(got[i], want[i], tol)) << describe(c) << " output " << i;
    for (int64_t k = 0; k < want[i].numel() && got[i].numel() == want[i].numel(); ++k)
      worst = std::max(worst, std::fabs(got[i].as_double(k) - want[i].as_double(k)));
  }
  return worst;
}


TEST(FastRecurrent, MatchesReferenceOnEveryIsa) {
  for (Isa isa : testing_gemm::runnable_isas()) {
    IsaScope scope(isa);
    for (const Case& c : cases())
      // Float against double differs a little: a zero difference would mean the fast path never ran.
      EXPECT_GT(expect_same(c, 2e-5), 0.0) << describe(c) << " on " << isa_name(isa) << " fell back";
  }
}

TEST(FastRecurrent, LongSequenceStaysClose) {
  // Errors do not grow along 200 steps (the state stays bounded by the gates).
  expect_same(mk("LSTM", 200, 2, 40, 64, "bidirectional", 0, true, false, true, true), 5e-5);
  expect_same(mk("GRU", 200, 1, 40, 64, "forward", 0, true), 5e-5);
}

TEST(FastRecurrent, OtherCasesGoToTheReference) {
  using A = Attribute;
  // Non-default activations and non-constant weights: the reference kernel answers, bit for bit.
  Case acts = mk("LSTM", 4, 2, 3, 8, "forward");
  acts.extra = {A::make_strings("activations", {"HardSigmoid", "Tanh", "Relu"})};
  Case weights = mk("GRU", 4, 3, 5, 6, "reverse");
  weights.w_const = false;
  for (const Case& c : {acts, weights}) EXPECT_EQ(expect_same(c, 0), 0.0) << describe(c);
}

}  // namespace
}  // namespace fusor::test
