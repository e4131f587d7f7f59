// Prepacked constants (kernels/prepack.h): every kernel that packs a constant weight asks its
// KernelInfo for the buffer; a kernel created from stored bytes (as a session restored from an
// image is) must not repack and must compute bit-identical outputs.
//
// Each case creates the node's fast kernel twice: once with a recording source (the fill runs,
// the bytes are kept), once with a replaying source that hands out copies of those bytes at new
// addresses and fails on any fill, from a KernelInfo whose constant inputs are ZEROED (same
// shapes). The second kernel can only compute the first one's outputs from the replayed bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/gemm/gemm.h"
#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {

using BufferKey = std::tuple<uint64_t, std::string>;

class RecordingSource : public PrepackSource {
 public:
  PrepackedBuffer get(uint64_t id, std::string_view name, size_t bytes, const PrepackFill& fill) override {
    PrepackedBuffer b = fill_fresh(bytes, fill);
    auto [it, fresh] = bufs.emplace(BufferKey{id, std::string(name)}, b);
    EXPECT_TRUE(fresh) << "buffer '" << name << "' asked twice";
    return b;
  }
  std::map<BufferKey, PrepackedBuffer> bufs;
};

class ReplaySource : public PrepackSource {
 public:
  explicit ReplaySource(const std::map<BufferKey, PrepackedBuffer>& from) {
    for (const auto& [k, b] : from) {
      std::vector<char> copy(static_cast<const char*>(b.data()), static_cast<const char*>(b.data()) + b.size());
      bufs.emplace(k, fill_fresh(b.size(), [&](void* dst) { std::memcpy(dst, copy.data(), copy.size()); }));
    }
  }
  PrepackedBuffer get(uint64_t id, std::string_view name, size_t bytes, const PrepackFill&) override {
    auto it = bufs.find(BufferKey{id, std::string(name)});
    if (it == bufs.end() || it->second.size() != bytes) {
      ADD_FAILURE() << "buffer '" << name << "' (" << bytes << " bytes) was not stored";
      return fill_fresh(bytes, nullptr);
    }
    ++served;
    return it->second;
  }
  std::map<BufferKey, PrepackedBuffer> bufs;
  size_t served = 0;
};

struct Case {
  std::string what;
  OpType op;
  std::vector<Tensor> ins;
  std::vector<bool> constant;
  std::vector<Attribute> attrs;
  int64_t opset = 17;
};

// Creates the node's "fast" kernel with `pp`, seeing the constant inputs (zeroed when `zero`),
// and runs it on the real inputs.
Tensor run_with(const Case& c, const Prepacker& pp, bool zero) {
  Graph g;
  std::vector<ValueId> vals;
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < c.ins.size(); ++i) {
    ValueId v = g.add_value("in" + std::to_string(i), ValueType::tensor(c.ins[i].dtype(), c.ins[i].shape()));
    if (c.constant[i]) {
      Tensor t = c.ins[i].clone();
      if (zero) std::memset(t.raw(), 0, t.nbytes());
      g.value(v).constant = std::make_shared<Tensor>(std::move(t));
    }
    vals.push_back(v);
    ptrs.push_back(&c.ins[i]);
  }
  NodeId id = g.create_node(c.op, vals, 1, c.attrs, "n");
  const Node& n = g.node(id);
  KernelInfo info;
  info.node = &n;
  info.graph = &g;
  info.opset = c.opset;
  for (ValueId v : n.inputs) {
    info.input_types.push_back(&g.value(v).type);
    info.const_inputs.push_back(g.value(v).constant);
  }
  for (ValueId v : n.outputs) info.output_types.push_back(&g.value(v).type);
  info.prepack = pp;
  std::unique_ptr<Kernel> k = KernelRegistry::global().create(info, "fast");
  HarnessContext ctx(ptrs, {true}, n.describe());
  k->compute(ctx);
  return ctx.outputs()[0];
}

std::vector<Attribute> conv_attrs(int64_t group, std::vector<int64_t> pads, std::vector<int64_t> strides) {
  return {Attribute::make_int("group", group), Attribute::make_ints("pads", std::move(pads)),
          Attribute::make_ints("strides", std::move(strides))};
}

std::vector<Case> cases() {
  uint32_t s = 7;
  const OpType fconv("fusor", "FusedConv"), nhwc("fusor", "NhwcConv");
  std::vector<Case> v;
  v.push_back({"MatMul, constant B", OpType::onnx("MatMul"), {rnd({5, 19}, s++), rnd({19, 37}, s++)}, {false, true}, {}});
  v.push_back({"Gemm transB, constant B and C", OpType::onnx("Gemm"), {rnd({6, 23}, s++), rnd({17, 23}, s++), rnd({17}, s++)},
               {false, true, true},
               {Attribute::make_int("transB", 1), Attribute::make_float("beta", 0.5f), Attribute::make_float("alpha", 1.5f)}});
  v.push_back({"Conv 3x3", OpType::onnx("Conv"), {rnd({1, 3, 9, 7}, s++), rnd({5, 3, 3, 3}, s++), rnd({5}, s++)},
               {false, true, true}, conv_attrs(1, {1, 1, 1, 1}, {1, 1})});
  v.push_back({"Conv grouped, stride 2", OpType::onnx("Conv"), {rnd({2, 6, 8, 5}, s++), rnd({4, 3, 3, 2}, s++)},
               {false, true}, conv_attrs(2, {0, 1, 0, 1}, {2, 2})});
  v.push_back({"Conv depthwise", OpType::onnx("Conv"), {rnd({1, 5, 10, 9}, s++), rnd({5, 1, 3, 3}, s++)},
               {false, true}, conv_attrs(5, {1, 1, 1, 1}, {1, 1})});
  v.push_back({"Conv 1x1", OpType::onnx("Conv"), {rnd({1, 7, 5, 6}, s++), rnd({9, 7, 1, 1}, s++)}, {false, true},
               conv_attrs(1, {0, 0, 0, 0}, {1, 1})});
  v.push_back({"ConvTranspose groups 2", OpType::onnx("ConvTranspose"), {rnd({1, 4, 5, 6}, s++), rnd({4, 3, 3, 3}, s++)},
               {false, true}, {Attribute::make_int("group", 2), Attribute::make_ints("strides", {2, 2})}});
  v.push_back({"FusedConv Relu with bias", fconv, {rnd({1, 4, 8, 8}, s++), rnd({6, 4, 3, 3}, s++), rnd({6}, s++)},
               {false, true, true}, {Attribute::make_int("group", 1), Attribute::make_ints("pads", {1, 1, 1, 1}),
                                     Attribute::make_string("activation", "Relu")}});
  v.push_back({"NhwcConv 3x3", nhwc, {rnd({1, 8, 8, 4}, s++), rnd({6, 4, 3, 3}, s++)}, {false, true},
               {Attribute::make_int("group", 1), Attribute::make_ints("pads", {1, 1, 1, 1})}});
  v.push_back({"NhwcConv depthwise", nhwc, {rnd({1, 7, 6, 5}, s++), rnd({5, 1, 3, 3}, s++)}, {false, true},
               {Attribute::make_int("group", 5), Attribute::make_ints("pads", {1, 1, 1, 1})}});
  v.push_back({"FusedGemm", OpType("fusor", "FusedGemm"), {rnd({4, 11}, s++), rnd({11, 13}, s++), rnd({13}, s++)},
               {false, true, false}, {Attribute::make_string("activation", "Tanh")}});
  v.push_back({"FusedMatMul transB", OpType("fusor", "FusedMatMul"), {rnd({2, 3, 9}, s++), rnd({12, 9}, s++)},
               {false, true}, {Attribute::make_int("transB", 1), Attribute::make_float("alpha", 0.5f)}});
  v.push_back({"LSTM", OpType::onnx("LSTM"), {rnd({3, 2, 5}, s++), rnd({1, 16, 5}, s++), rnd({1, 16, 4}, s++)},
               {false, true, true}, {Attribute::make_int("hidden_size", 4)}, 14});
  v.push_back({"GRU bidirectional", OpType::onnx("GRU"), {rnd({4, 1, 3}, s++), rnd({2, 9, 3}, s++), rnd({2, 9, 3}, s++)},
               {false, true, true},
               {Attribute::make_int("hidden_size", 3), Attribute::make_string("direction", "bidirectional")}, 14});
  // The blocked layout (kernels/nchwc): dense on blocked input, the NCHW-input stem, depthwise.
  const OpType nchwc("fusor", "NchwcConv");
  v.push_back({"NchwcConv blocked", nchwc, {rnd({1, 2, 6, 5, 16}, s++), rnd({20, 32, 3, 3}, s++), rnd({20}, s++)},
               {false, true, true}, conv_attrs(1, {1, 1, 1, 1}, {1, 1})});
  v.push_back({"NchwcConv NCHW input", nchwc, {rnd({1, 3, 9, 8}, s++), rnd({16, 3, 3, 3}, s++)}, {false, true},
               conv_attrs(1, {1, 1, 1, 1}, {2, 2})});
  v.push_back({"NchwcConv depthwise", nchwc, {rnd({1, 2, 7, 6, 16}, s++), rnd({32, 1, 3, 3}, s++)}, {false, true},
               conv_attrs(32, {1, 1, 1, 1}, {1, 1})});
  // Winograd F(4,3): the transformed filters U (6, 6, C, K), packed for the ISA's kernel.
  v.push_back({"WinogradConv F(4,3)", OpType("fusor", "WinogradConv"), {rnd({1, 5, 9, 8}, s++), rnd({6, 6, 5, 7}, s++)},
               {false, true},
               {Attribute::make_int("tile", 4), Attribute::make_ints("pads", {1, 1, 1, 1}),
                Attribute::make_ints("strides", {1, 1}), Attribute::make_ints("kernel_shape", {3, 3})}});
  // The same op on the blocked layout (rank-5 X): U comes through the same buffer, bias and a
  // blocked residual in the kernel's registers, 20 output channels (a partial block).
  v.push_back({"WinogradConv F(4,3) blocked", OpType("fusor", "WinogradConv"),
               {rnd({1, 2, 7, 9, 16}, s++), rnd({6, 6, 24, 20}, s++), rnd({20}, s++), rnd({1, 2, 7, 9, 16}, s++)},
               {false, true, true, false},
               {Attribute::make_int("tile", 4), Attribute::make_ints("pads", {1, 1, 1, 1}),
                Attribute::make_string("activation", "Relu")}});
  for (Case& c : v)
    if (c.op.domain() == kFusorDomain) c.opset = 1;
  return v;
}

void check_all(const char* isa_label) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.what + " (" + isa_label + ")");
    const Tensor plain = run_with(c, Prepacker{}, false);
    RecordingSource rec;
    const Tensor fresh = run_with(c, Prepacker{&rec, 42}, false);
    EXPECT_TRUE(fresh.bit_equal(plain));
    ASSERT_FALSE(rec.bufs.empty()) << "the kernel asked for no prepacked buffer";
    ReplaySource replay(rec.bufs);
    const Tensor restored = run_with(c, Prepacker{&replay, 42}, true);
    EXPECT_EQ(replay.served, rec.bufs.size());
    EXPECT_TRUE(restored.bit_equal(fresh)) << "outputs of the kernel made from stored bytes differ";
    // Sanity: with zeroed constants and fresh packing the output does differ, so the check above
    // is not vacuous.
    EXPECT_FALSE(run_with(c, Prepacker{}, true).bit_equal(fresh));
  }
}

TEST(Prepack, KernelsRestoredFromStoredBytesComputeBitIdenticalOutputs) { check_all("default ISA"); }

TEST(Prepack, EveryIsaPathRestoresBitIdentically) {
  for (const char* isa : {"scalar", "avx2", "avx512"}) {
    if (clamp_isa(*parse_isa(isa)) != *parse_isa(isa)) continue;  // not on this machine
    set_isa_env(isa);
    check_all(isa);
  }
  set_isa_env(nullptr);
}

TEST(Prepack, BufferNamesCarryTheGemmTile) {
  // A layout chosen at run time (FUSOR_ISA) must never read bytes packed for another: the name
  // differs, so a restored session's lookup misses and the kernel fills instead.
  RecordingSource a, b;
  const float w[4] = {1, 2, 3, 4};
  PackedB(MatrixRef{w, 2}, 2, 2, Isa::Scalar, Prepacker{&a, 1});
  PackedB(MatrixRef{w, 2}, 2, 2, clamp_isa(Isa::Avx512), Prepacker{&b, 1});
  ASSERT_EQ(a.bufs.size(), 1u);
  ASSERT_EQ(b.bufs.size(), 1u);
  EXPECT_EQ(std::get<1>(a.bufs.begin()->first).rfind("b/scalar", 0), 0u);
  if (clamp_isa(Isa::Avx512) != Isa::Scalar) {
    EXPECT_NE(std::get<1>(a.bufs.begin()->first), std::get<1>(b.bufs.begin()->first));
  }
}

TEST(Prepack, FreshBuffersAreAlignedAndFilledOnce) {
  int calls = 0;
  PrepackedBuffer b = fill_fresh(100, [&](void* p) {
    ++calls;
    std::memset(p, 3, 100);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  EXPECT_EQ(b.as<unsigned char>()[99], 3);
  std::shared_ptr<const float> keep = b.share<float>(64);
  b = PrepackedBuffer();
  EXPECT_EQ(reinterpret_cast<const unsigned char*>(keep.get())[0], 3);  // the alias keeps the storage
}

}  // namespace
}  // namespace fusor::test
