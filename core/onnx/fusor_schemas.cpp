#include "core/onnx/fusor_schemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/symbol.h"
#include "core/ops/fusor_ops.h"

namespace fusor {
namespace {

using onnx::InferenceContext;
using onnx::TypeProto;

// A view of an inference context with some input types replaced, and its outputs collected
// locally (to be transformed and written back by the caller). Lets a fused op reuse ONNX's own
// inference function on a transposed or channels-first picture of its tensors.
class ViewContext : public InferenceContext {
 public:
  explicit ViewContext(InferenceContext& base) : base_(base), outputs_(base.getNumOutputs()) {}
  void set_input(size_t i, TypeProto t) { inputs_[i] = std::move(t); }

  const onnx::AttributeProto* getAttribute(const std::string& n) const override { return base_.getAttribute(n); }
  size_t getNumInputs() const override { return base_.getNumInputs(); }
  const TypeProto* getInputType(size_t i) const override {
    auto it = inputs_.find(i);
    return it != inputs_.end() ? &it->second : base_.getInputType(i);
  }
  const onnx::TensorProto* getInputData(size_t i) const override {
    return inputs_.count(i) ? nullptr : base_.getInputData(i);
  }
  size_t getNumOutputs() const override { return outputs_.size(); }
  TypeProto* getOutputType(size_t i) override { return &outputs_.at(i); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& n) override {
    return base_.getGraphAttributeInferencer(n);
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t i) const override {
    return inputs_.count(i) ? nullptr : base_.getInputSparseData(i);
  }
  const onnx::TensorShapeProto* getSymbolicInput(size_t i) const override {
    return inputs_.count(i) ? nullptr : base_.getSymbolicInput(i);
  }

  TypeProto& output(size_t i) { return outputs_.at(i); }

 private:
  InferenceContext& base_;
  std::map<size_t, TypeProto> inputs_;
  std::vector<TypeProto> outputs_;
};

// The type with its shape's dims reordered: new dim j is old dim perm[j].
TypeProto permuted(const TypeProto& t, const std::vector<int>& perm) {
  TypeProto out = t;
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return out;
  const auto& dims = t.tensor_type().shape().dim();
  if (static_cast<size_t>(dims.size()) != perm.size()) return out;
  auto* shape = out.mutable_tensor_type()->mutable_shape();
  for (size_t j = 0; j < perm.size(); ++j) *shape->mutable_dim(static_cast<int>(j)) = dims[perm[j]];
  return out;
}

int input_rank(InferenceContext& ctx, size_t i) {
  if (i >= ctx.getNumInputs() || !ctx.getInputType(i)) return -1;
  const TypeProto& t = *ctx.getInputType(i);
  return t.has_tensor_type() && t.tensor_type().has_shape() ? t.tensor_type().shape().dim_size() : -1;
}

// NHWC <-> NCHW orders for a rank.
std::vector<int> to_channels_first(int rank) {
  std::vector<int> p{0, rank - 1};
  for (int i = 1; i < rank - 1; ++i) p.push_back(i);
  return p;
}
std::vector<int> to_channels_last(int rank) {
  std::vector<int> p{0};
  for (int i = 2; i < rank; ++i) p.push_back(i);
  p.push_back(1);
  return p;
}

const onnx::OpSchema& onnx_schema(const char* op) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(op, "");
  if (!s) throw std::logic_error(std::string("fusor_schemas: libonnx has no schema for ") + op);
  return *s;
}

void run_onnx_inference(const char* op, InferenceContext& ctx) {
  const auto& fn = onnx_schema(op).GetTypeAndShapeInferenceFunction();
  if (fn) fn(ctx);
}

// ONNX's inference of `op` on a channels-first view of input 0; output 0 permuted back.
void infer_nhwc(const char* op, InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int rank = input_rank(ctx, 0);
  if (rank < 3) return;
  ViewContext view(ctx);
  view.set_input(0, permuted(*ctx.getInputType(0), to_channels_first(rank)));
  run_onnx_inference(op, view);
  const TypeProto& y = view.output(0);
  if (y.has_tensor_type() && y.tensor_type().has_shape() && y.tensor_type().shape().dim_size() == rank)
    *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape() =
        permuted(y, to_channels_last(rank)).tensor_type().shape();
}

// The blocked layout (kernels/nchwc/nchwc_format.h): [N, C, H, W] <-> [N, ceil(C / B), H, W, B].
// A dim is copied as is (value or symbol), a channel count only when known.
TypeProto nchwc_blocked(const TypeProto& t, int64_t block) {
  TypeProto out = t;
  auto* shape = out.mutable_tensor_type()->mutable_shape();
  const auto& c = t.tensor_type().shape().dim(1);
  shape->mutable_dim(1)->Clear();
  if (c.has_dim_value() && block > 0) shape->mutable_dim(1)->set_dim_value((c.dim_value() + block - 1) / block);
  shape->add_dim()->set_dim_value(block);
  return out;
}

// [N, CB, H, W, B] seen as [N, channels, H, W] (channels <= 0: CB * B when known).
TypeProto nchwc_plain(const TypeProto& t, int64_t channels) {
  TypeProto out = t;
  auto* shape = out.mutable_tensor_type()->mutable_shape();
  const auto cb = t.tensor_type().shape().dim(1), b = t.tensor_type().shape().dim(4);
  shape->mutable_dim()->RemoveLast();
  shape->mutable_dim(1)->Clear();
  if (channels > 0) shape->mutable_dim(1)->set_dim_value(channels);
  else if (cb.has_dim_value() && b.has_dim_value()) shape->mutable_dim(1)->set_dim_value(cb.dim_value() * b.dim_value());
  return out;
}

int64_t nchwc_block_of(const TypeProto& t) {
  const auto& d = t.tensor_type().shape().dim(4);
  return d.has_dim_value() ? d.dim_value() : 0;
}

void set_output_shape(InferenceContext& ctx, const TypeProto& t) {
  *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape() = t.tensor_type().shape();
}

void infer_reorder_to_nchwc(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int64_t block = onnx::getAttribute(ctx, "block", 16);
  if (block != 8 && block != 16) fail_shape_inference("ReorderToNchwc: block must be 8 or 16, got ", block);
  const int rank = input_rank(ctx, 0);
  if (rank < 0) return;
  if (rank != 4) fail_shape_inference("ReorderToNchwc: X must have rank 4 (N, C, H, W), got ", rank);
  set_output_shape(ctx, nchwc_blocked(*ctx.getInputType(0), block));
}

void infer_reorder_from_nchwc(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int64_t channels = onnx::getAttribute(ctx, "channels", 0);
  if (channels <= 0) fail_shape_inference("ReorderFromNchwc: channels must be positive, got ", channels);
  const int rank = input_rank(ctx, 0);
  if (rank < 0) return;
  if (rank != 5) fail_shape_inference("ReorderFromNchwc: X must have rank 5 (N, CB, H, W, B), got ", rank);
  set_output_shape(ctx, nchwc_plain(*ctx.getInputType(0), channels));
}

// ONNX's inference of `op` on the NCHW picture of input 0 (blocked, or NCHW as it is for a
// convolution with few input channels), output 0 blocked with the `block` attribute (conv) or X's
// block. Convolutions take their input channels from W.
void infer_nchwc(const char* op, InferenceContext& ctx, bool conv) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int rank = input_rank(ctx, 0);
  if (rank < 0) return;
  if (rank != 5 && !(conv && rank == 4))
    fail_shape_inference(op, " (NCHWc): X must have rank 5 (N, CB, H, W, B)", conv ? " or 4" : "", ", got ", rank);
  int64_t block = conv ? onnx::getAttribute(ctx, "block", 16) : nchwc_block_of(*ctx.getInputType(0));
  if (rank == 5 && conv && nchwc_block_of(*ctx.getInputType(0)) != block)
    fail_shape_inference(op, " (NCHWc): X's block ", nchwc_block_of(*ctx.getInputType(0)), " is not `block` ", block);
  ViewContext view(ctx);
  if (rank == 5) {
    int64_t channels = 0;
    if (conv && input_rank(ctx, 1) == 4) {
      const auto& wd = ctx.getInputType(1)->tensor_type().shape().dim(1);
      if (wd.has_dim_value()) channels = wd.dim_value() * onnx::getAttribute(ctx, "group", 1);
    }
    view.set_input(0, nchwc_plain(*ctx.getInputType(0), channels));
  }
  run_onnx_inference(op, view);
  const TypeProto& y = view.output(0);
  if (block > 0 && y.has_tensor_type() && y.tensor_type().has_shape() && y.tensor_type().shape().dim_size() == 4)
    set_output_shape(ctx, nchwc_blocked(y, block));
}

// MatMul with transA/transB: ONNX's MatMul inference on the transposed views.
void infer_fused_matmul(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  ViewContext view(ctx);
  for (size_t i = 0; i < 2; ++i) {
    const char* attr = i == 0 ? "transA" : "transB";
    const int rank = input_rank(ctx, i);
    if (onnx::getAttribute(ctx, attr, 0) == 0 || rank < 2) continue;
    std::vector<int> perm;
    for (int d = 0; d < rank; ++d) perm.push_back(d);
    std::swap(perm[rank - 1], perm[rank - 2]);
    view.set_input(i, permuted(*ctx.getInputType(i), perm));
  }
  run_onnx_inference("MatMul", view);
  const TypeProto& y = view.output(0);
  if (y.has_tensor_type() && y.tensor_type().has_shape())
    *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape() = y.tensor_type().shape();
}

// Y: Q's shape with the last dim from V.
void infer_attention(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 2)) return;
  const auto& q = onnx::getInputShape(ctx, 0);
  const auto& v = onnx::getInputShape(ctx, 2);
  if (q.dim_size() < 2 || v.dim_size() < 2)
    fail_shape_inference("Attention: Q and V must have rank >= 2, got ", q.dim_size(), " and ", v.dim_size());
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  *out = q;
  *out->mutable_dim(q.dim_size() - 1) = v.dim(v.dim_size() - 1);
}

// Y: QKV's shape with a third of its last dim.
void infer_packed_attention(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  if (x.dim_size() != 3) fail_shape_inference("PackedAttention: QKV must have rank 3, got ", x.dim_size());
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  *out = x;
  auto* last = out->mutable_dim(2);
  if (last->has_dim_value()) last->set_dim_value(last->dim_value() / 3);
  else last->clear_dim_param();
}

// Y: (N, K, H + pad_t + pad_b - 2, W + pad_l + pad_r - 2) from X (N, C, H, W) and U (a, a, C, K);
// blocked (X rank 5: (N, ceil(C / 16), H, W, 16)), Y is (N, ceil(K / 16), OH, OW, 16).
void infer_winograd_conv(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const auto& x = onnx::getInputShape(ctx, 0);
  const auto& u = onnx::getInputShape(ctx, 1);
  if (x.dim_size() != 4 && x.dim_size() != 5)
    fail_shape_inference("WinogradConv: X must be 4-D (N, C, H, W) or blocked (N, CB, H, W, 16), got rank ", x.dim_size());
  const bool blocked = x.dim_size() == 5;
  if (blocked && x.dim(4).has_dim_value() && x.dim(4).dim_value() != 16)
    fail_shape_inference("WinogradConv: a blocked X has block 16, got ", x.dim(4).dim_value());
  if (u.dim_size() != 4) fail_shape_inference("WinogradConv: U must be 4-D (a, a, C, K), got rank ", u.dim_size());
  const int64_t tile = onnx::getAttribute(ctx, "tile", 0);
  if (tile != 2 && tile != 4) fail_shape_inference("WinogradConv: tile must be 2 or 4, got ", tile);
  for (int d = 0; d < 2; ++d)
    if (u.dim(d).has_dim_value() && u.dim(d).dim_value() != tile + 2)
      fail_shape_inference("WinogradConv: U's dim ", d, " must be tile + 2 = ", tile + 2, ", got ", u.dim(d).dim_value());
  if (x.dim(1).has_dim_value() && u.dim(2).has_dim_value() &&
      x.dim(1).dim_value() != (blocked ? (u.dim(2).dim_value() + 15) / 16 : u.dim(2).dim_value()))
    fail_shape_inference("WinogradConv: X has ", x.dim(1).dim_value(), blocked ? " channel blocks, U " : " channels, U ",
                         u.dim(2).dim_value(), " channels");
  std::vector<int64_t> pads(4, 0);
  if (const auto* a = ctx.getAttribute("pads")) {
    if (a->ints_size() != 4) fail_shape_inference("WinogradConv: pads must have 4 values, got ", a->ints_size());
    for (int i = 0; i < 4; ++i) pads[i] = a->ints(i);
  }
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  out->clear_dim();
  *out->add_dim() = x.dim(0);
  auto* k = out->add_dim();
  if (!blocked) *k = u.dim(3);
  else if (u.dim(3).has_dim_value()) k->set_dim_value((u.dim(3).dim_value() + 15) / 16);
  for (int d = 0; d < 2; ++d) {
    auto* o = out->add_dim();
    if (x.dim(2 + d).has_dim_value()) {
      const int64_t v = x.dim(2 + d).dim_value() + pads[d] + pads[d + 2] - 2;
      if (v <= 0) fail_shape_inference("WinogradConv: the output would be empty (spatial dim ", v, ")");
      o->set_dim_value(v);
    }
  }
  if (blocked) out->add_dim()->set_dim_value(16);
}

// U: (tile + 2, tile + 2, C, K) from W (K, C, 3, 3).
void infer_winograd_filter(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const int64_t tile = onnx::getAttribute(ctx, "tile", 0);
  if (tile != 2 && tile != 4) fail_shape_inference("WinogradFilter: tile must be 2 or 4, got ", tile);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& w = onnx::getInputShape(ctx, 0);
  if (w.dim_size() != 4) fail_shape_inference("WinogradFilter: W must be 4-D (K, C, 3, 3), got rank ", w.dim_size());
  for (int d = 2; d < 4; ++d)
    if (w.dim(d).has_dim_value() && w.dim(d).dim_value() != 3)
      fail_shape_inference("WinogradFilter: W must be 3x3, dim ", d, " is ", w.dim(d).dim_value());
  auto* out = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  out->clear_dim();
  out->add_dim()->set_dim_value(tile + 2);
  out->add_dim()->set_dim_value(tile + 2);
  *out->add_dim() = w.dim(1);
  *out->add_dim() = w.dim(0);
}

// Every output: the element type and shape of input 0.
void infer_like_input(InferenceContext& ctx) {
  for (size_t o = 0; o < ctx.getNumOutputs(); ++o) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
    if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, o);
  }
}

// Shape of MatMul's inference with transB (infer_fused_matmul); a float output for QMatMulFloat.
void infer_qmatmul(InferenceContext& ctx, bool float_out) {
  infer_fused_matmul(ctx);
  if (float_out) ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

// Conv's shape (X, W and the Conv attributes; NHWC data with nhwc) with a float output:
// (Nhwc)ConvIntegerToFloat.
void infer_conv_float(InferenceContext& ctx, bool nhwc) {
  if (nhwc) {
    infer_nhwc("Conv", ctx);
  } else {
    run_onnx_inference("Conv", ctx);
  }
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

// Y: Table's element type, X's shape.
void infer_lookup(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// The inference a catalog entry's shape rule names (core/ops/fusor_ops.h).
std::function<void(InferenceContext&)> inference_for(const FusorOpSignature& sig) {
  const std::string base = sig.shape_op;
  switch (sig.shape_rule) {
    case ShapeRule::LikeInput0: return infer_like_input;
    case ShapeRule::As: return [base](InferenceContext& c) { run_onnx_inference(base.c_str(), c); };
    case ShapeRule::Nhwc: return [base](InferenceContext& c) { infer_nhwc(base.c_str(), c); };
    case ShapeRule::MatMul: return infer_fused_matmul;
    case ShapeRule::Attention: return infer_attention;
    case ShapeRule::PackedAttention: return infer_packed_attention;
    case ShapeRule::WinogradConv: return infer_winograd_conv;
    case ShapeRule::WinogradFilter: return infer_winograd_filter;
    case ShapeRule::ToNchwc: return infer_reorder_to_nchwc;
    case ShapeRule::FromNchwc: return infer_reorder_from_nchwc;
    case ShapeRule::NchwcConv: return [](InferenceContext& c) { infer_nchwc("Conv", c, true); };
    case ShapeRule::Nchwc: return [base](InferenceContext& c) { infer_nchwc(base.c_str(), c, false); };
    case ShapeRule::QMatMul: return [](InferenceContext& c) { infer_qmatmul(c, false); };
    case ShapeRule::QMatMulFloat: return [](InferenceContext& c) { infer_qmatmul(c, true); };
    case ShapeRule::ConvFloat: return [](InferenceContext& c) { infer_conv_float(c, false); };
    case ShapeRule::NhwcConvFloat: return [](InferenceContext& c) { infer_conv_float(c, true); };
    case ShapeRule::Lookup: return infer_lookup;
  }
  return infer_like_input;
}

onnx::OpSchema::FormalParameterOption option_of(FusorParam::Option o) {
  switch (o) {
    case FusorParam::Option::Optional: return onnx::OpSchema::Optional;
    case FusorParam::Option::Variadic: return onnx::OpSchema::Variadic;
    case FusorParam::Option::Single: break;
  }
  return onnx::OpSchema::Single;
}

void add_attr(onnx::OpSchema& s, const FusorAttr& a, const std::string& op) {
  using AP = onnx::AttributeProto;
  static const std::map<std::string, AP::AttributeType> kinds = {
      {"float", AP::FLOAT}, {"int", AP::INT},         {"string", AP::STRING}, {"floats", AP::FLOATS},
      {"ints", AP::INTS},   {"strings", AP::STRINGS}, {"tensor", AP::TENSOR}};
  const AP::AttributeType kind = kinds.at(a.kind);
  const std::string desc = "See the op's description.";
  if (!a.has_default) {
    s.Attr(a.name, desc, kind, a.required);
    return;
  }
  try {
    switch (kind) {
      case AP::FLOAT: s.Attr(a.name, desc, kind, std::stof(a.default_text)); return;
      case AP::INT: s.Attr(a.name, desc, kind, static_cast<int64_t>(std::stoll(a.default_text))); return;
      case AP::STRING: s.Attr(a.name, desc, kind, a.default_text); return;
      case AP::FLOATS:  // only the empty list ("floats=")
        if (a.default_text.empty()) {
          s.Attr(a.name, desc, kind, std::vector<float>{});
          return;
        }
        break;
      default: break;
    }
  } catch (const std::exception&) {
  }
  throw std::logic_error("fusor_schemas: unsupported default '" + a.default_text + "' for " + op + "." + a.name);
}

onnx::OpSchema make_schema(const FusorOpSignature& sig) {
  onnx::OpSchema s;
  s.SetName(sig.name).SetDomain(kFusorDomain).SinceVersion(kFusorOpsetVersion).SetDoc(sig.doc);
  s.SetLocation(__FILE__, __LINE__);
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const auto& p = sig.inputs[i];
    s.Input(static_cast<int>(i), p.name, "", p.type, option_of(p.option));
  }
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const auto& p = sig.outputs[i];
    s.Output(static_cast<int>(i), p.name, "", p.type, option_of(p.option));
  }
  for (const auto& c : sig.constraints) {
    std::vector<std::string> types;
    for (const auto& t : c.types) types.push_back("tensor(" + t + ")");
    s.TypeConstraint(c.name, types, "Element types of " + c.name + ".");
  }
  for (const auto& a : sig.attrs) add_attr(s, a, sig.name);
  s.TypeAndShapeInferenceFunction(inference_for(sig));
  return s;
}

}  // namespace

void register_fusor_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    if (!ranges.Map().count(kFusorDomain)) ranges.AddDomainToVersion(kFusorDomain, 1, kFusorOpsetVersion);
    for (const auto& sig : fusor_op_signatures()) {
      if (onnx::OpSchemaRegistry::Schema(sig.name, kFusorOpsetVersion, kFusorDomain)) continue;
      onnx::RegisterSchema(make_schema(sig));
    }
  });
}

}  // namespace fusor
