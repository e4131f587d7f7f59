#include "core/ops/fusor_ops.h"

#include <sstream>
#include <stdexcept>

namespace fusor {
namespace {

// The attributes every fused-activation op carries: the activation's op name ("" for none,
// "Relu", "Clip", "Gelu" (erf), "GeluTanh" (the tanh approximation), ...) and its float
// parameters (LeakyRelu: [alpha]; Clip: [min, max]; HardSigmoid: [alpha, beta]), as `a.attrs`
// gives them; none by default (a rule can copy them from an op that has no activation).
#define ACTIVATION "activation:string= activation_params:floats="
#define CONV_ATTRS "auto_pad:string=NOTSET dilations:ints group:int=1 kernel_shape:ints pads:ints strides:ints"
#define POOL_ATTRS "auto_pad:string=NOTSET kernel_shape:ints! pads:ints strides:ints ceil_mode:int=0"
#define FLOATS "T=float,float16,double"
#define QTYPES "T1=uint8,int8; T2=int8,uint8"
#define QIO "x_scale:float! x_zero_point:int=0 y_scale:float! y_zero_point:int=0"
#define QBINARY "a_scale:float! a_zero_point:int=0 b_scale:float! b_zero_point:int=0 y_scale:float! y_zero_point:int=0"

const std::vector<FusorOpSpec> kSpecs = {
    {"FusedConv", "X:T W:T B?:T Z?:T", "Y:T", FLOATS, CONV_ATTRS " " ACTIVATION,
     "Conv, plus an optional residual Z added to its output, then an optional activation.", "as Conv"},
    {"WinogradConv", "X:T U:T B?:T Z?:T", "Y:T", "T=float", CONV_ATTRS " tile:int! " ACTIVATION,
     "FusedConv for a 3x3, stride-1, dilation-1, single-group 2-D convolution (NCHW) by Winograd's "
     "F(tile x tile, 3 x 3), tile 2 or 4: the Conv attributes must say so (kernel_shape [3, 3] or "
     "absent, strides and dilations ones, group 1, auto_pad NOTSET); pads as Conv's. U holds the "
     "filters already transformed, G g G^T per (output, input) channel pair, shape (tile + 2, "
     "tile + 2, C, K), with fusor's matrices (kernels/winograd/matrices.h; docs/winograd.md). A rank-5 X "
     "is the cpu provider's blocked layout (N, ceil(C / 16), H, W, 16); Y and Z are then blocked too.", "winograd_conv"},
    {"WinogradFilter", "W:T", "U:T", "T=float", "tile:int!",
     "The filter transform WinogradConv takes: U = G g G^T per (output, input) channel pair of 3x3 filters W "
     "(K, C, 3, 3), shape (tile + 2, tile + 2, C, K), tile 2 or 4, with fusor's matrices. Written by rules on "
     "constant filters: constant folding computes it once (its result may be 4x W's size there).",
     "winograd_filter"},
    {"FusedGemm", "A:T B:T C?:T", "Y:T", FLOATS,
     "alpha:float=1 beta:float=1 transA:int=0 transB:int=0 " ACTIVATION,
     "Gemm followed by an optional activation, applied in the GEMM epilogue.", "as Gemm"},
    {"FusedMatMul", "A:T B:T Bias?:T", "Y:T", FLOATS,
     "transA:int=0 transB:int=0 alpha:float=1 " ACTIVATION,
     "alpha * op(A) x op(B) + Bias (broadcast on the last axis), op transposing the last two axes when "
     "transA/transB is 1, then an optional activation. Any rank, as MatMul.", "matmul"},
    {"Gelu", "X:T", "Y:T", FLOATS, "approximate:string=none",
     "GELU: x * Phi(x); approximate \"tanh\" uses the tanh form."},
    {"BiasGelu", "X:T Bias:T", "Y:T", FLOATS, "approximate:string=none", "Gelu(X + Bias)."},
    {"QuickGelu", "X:T", "Y:T", FLOATS, "alpha:float=1.702", "x * Sigmoid(alpha * x)."},
    {"Silu", "X:T", "Y:T", FLOATS, "", "x * Sigmoid(x)."},
    {"LayerNorm", "X:T Scale:T B?:T", "Y:T", FLOATS, "axis:int=-1 epsilon:float=1e-05",
     "Layer normalization over the axes from `axis` on, in one pass; ONNX's LayerNormalization "
     "(opset 17) without the optional mean/inv-std outputs."},
    {"RMSNorm", "X:T Scale:T", "Y:T", FLOATS, "axis:int=-1 epsilon:float=1e-05",
     "x / sqrt(mean(x^2) + epsilon) * Scale over the axes from `axis` on."},
    {"SkipLayerNorm", "X:T Skip:T Gamma:T Beta?:T Bias?:T", "Y:T Sum?:T", FLOATS, "epsilon:float=1e-05",
     "LayerNorm(X + Skip + Bias) over the last axis; Sum (optional) is X + Skip + Bias."},
    {"Attention", "Q:T K:T V:T Mask?:M", "Y:T", FLOATS "; M=float,float16,double,bool",
     "scale:float=0 causal:int=0 transpose_k:int=0",
     "Softmax(Q x K^T * scale + Mask) x V over the last two axes, without materializing the score "
     "matrix for long sequences. scale 0 means 1/sqrt(head size); a bool Mask is true where "
     "attention is allowed; transpose_k 1 means K is given already transposed.", "attention"},
    {"MultiHeadAttention", "Q:T K:T V:T Mask?:M", "Y:T", FLOATS "; M=float,float16,double,bool",
     "head_size:int! scale:float=0 causal:int=0 seq_first:int=0",
     "Attention per head on the projections' layout: Q (B, Sq, H*d), K (B, Sk, H*d), V (B, Sk, H*dv) "
     "-> Y (B, Sq, H*dv), head h in columns [h*d, (h+1)*d) with d = head_size (H = Q's last axis / d, "
     "dv = V's last axis / H), so no head split or merge is materialized. "
     "seq_first 1: the first two axes are (S, B) in every operand. Mask broadcasts to (B, H, Sq, Sk); "
     "scale and causal as in Attention.", "attention"},
    {"PackedAttention", "QKV:T Mask?:M", "Y:T", FLOATS "; M=float,float16,double,bool",
     "head_size:int! scale:float=0 causal:int=0 seq_first:int=0",
     "MultiHeadAttention with Q, K and V side by side along the last axis of QKV (B, S, 3*H*d), as one "
     "fused projection produces them: Y (B, S, H*d).", "packed_attention"},
    // NHWC forms, for providers that prefer channels-last (layout level).
    {"NhwcConv", "X:T W:T B?:T Z?:T", "Y:T", FLOATS, CONV_ATTRS " " ACTIVATION,
     "FusedConv on NHWC input and output; W stays OIHW.", "nhwc Conv"},
    {"NhwcConvTranspose", "X:T W:T B?:T", "Y:T", FLOATS,
     CONV_ATTRS " output_padding:ints output_shape:ints " ACTIVATION,
     "ConvTranspose on NHWC input and output; W stays IOHW.", "nhwc ConvTranspose"},
    {"NhwcMaxPool", "X:T", "Y:T", "T=float,float16,double,uint8,int8", POOL_ATTRS " dilations:ints storage_order:int=0",
     "MaxPool on NHWC input and output.", "nhwc MaxPool"},
    {"NhwcAveragePool", "X:T", "Y:T", FLOATS, POOL_ATTRS " count_include_pad:int=0",
     "AveragePool on NHWC input and output.", "nhwc AveragePool"},
    {"NhwcGlobalAveragePool", "X:T", "Y:T", FLOATS, "", "GlobalAveragePool on NHWC input and output.", "nhwc GlobalAveragePool"},
    {"NhwcGlobalMaxPool", "X:T", "Y:T", FLOATS, "", "GlobalMaxPool on NHWC input and output.", "nhwc GlobalMaxPool"},
    // The blocked channel layout (NCHWc) of the cpu provider: [N, C, H, W] held as
    // [N, ceil(C / B), H, W, B] (kernels/nchwc/nchwc_format.h has the contract).
    {"ReorderToNchwc", "X:T", "Y:T", "T=float", "block:int=16",
     "NCHW X [N, C, H, W] to its blocked form [N, ceil(C / block), H, W, block]; padding lanes 0.", "to_nchwc"},
    {"ReorderFromNchwc", "X:T", "Y:T", "T=float", "channels:int!",
     "Blocked X [N, CB, H, W, B] back to NCHW [N, channels, H, W] (padding lanes dropped).", "from_nchwc"},
    {"NchwcConv", "X:T W:T B?:T Z?:T S?:T", "Y:T", "T=float", CONV_ATTRS " " ACTIVATION " block:int=16",
     "FusedConv on blocked data: X blocked [N, CB, H, W, block] (or plain NCHW [N, C, H, W], for "
     "few input channels), Z and Y blocked; W stays OIHW. With S [N, CB, 1, 1, block] (blocked X "
     "only), the conv reads X * S: each image's input channels scaled (a squeeze-excite scale).", "nchwc_conv"},
    {"NchwcAffine", "X:T Scale:T Shift:T", "Y:T", "T=float", ACTIVATION,
     "act(X * Scale[c] + Shift[c]) on each channel c of blocked X [N, CB, H, W, B]; Scale and Shift are "
     "vectors of the C channels (CB = ceil(C / B)), padding lanes get act(0). An inference "
     "BatchNormalization with its constants folded: Scale = scale / sqrt(var + epsilon), Shift = "
     "bias - mean * Scale."},
    {"NchwcMaxPool", "X:T", "Y:T", "T=float", POOL_ATTRS " dilations:ints storage_order:int=0",
     "MaxPool on blocked input and output.", "nchwc MaxPool"},
    {"NchwcAveragePool", "X:T", "Y:T", "T=float", POOL_ATTRS " count_include_pad:int=0",
     "AveragePool on blocked input and output.", "nchwc AveragePool"},
    {"NchwcGlobalAveragePool", "X:T", "Y:T", "T=float", "",
     "GlobalAveragePool on blocked input and output: [N, CB, H, W, B] to [N, CB, 1, 1, B].", "nchwc GlobalAveragePool"},
    {"NchwcGlobalMaxPool", "X:T", "Y:T", "T=float", "",
     "GlobalMaxPool on blocked input and output: [N, CB, H, W, B] to [N, CB, 1, 1, B].", "nchwc GlobalMaxPool"},
    // Quantized (int8) ops, made from QDQ groups by rules/extended/quantized.rules and run by
    // kernels/int8. Per-tensor scales and zero points of the activations are attributes (the rules
    // require them constant); a weight's per-channel scale (and zero point) are inputs.
    // Quantization is ONNX's: q = saturate(round_half_even(v / scale) + zero_point), and
    // dequantization v = (q - zero_point) * scale. A result matches its QDQ group up to ties broken
    // differently by float rounding (one step of y_scale, rarely).
    {"QConv", "X:T1 W:T2 WScale:tensor(float) WZero?:T2 B?:tensor(int32) BScale?:tensor(float) Z?:T1", "Y:T1", QTYPES,
     CONV_ATTRS " " QIO " " ACTIVATION " conv_scale:float=0 conv_zero_point:int=0 z_scale:float=1 z_zero_point:int=0",
     "Q(act(Conv(DQ(X), DQ(W; WScale, WZero, axis 0), DQ(B; BScale)))) at (y_scale, y_zero_point); act is a "
     "clamp (\"\", Relu, Clip). With Z (conv_scale > 0): Q(act(DQ(Q(conv; conv_scale, conv_zero_point)) + "
     "DQ(Z; z_scale, z_zero_point))), the residual Add of a QDQ graph done in the epilogue.", "as Conv"},
    {"NhwcQConv", "X:T1 W:T2 WScale:tensor(float) WZero?:T2 B?:tensor(int32) BScale?:tensor(float) Z?:T1", "Y:T1", QTYPES,
     CONV_ATTRS " " QIO " " ACTIVATION " conv_scale:float=0 conv_zero_point:int=0 z_scale:float=1 z_zero_point:int=0",
     "QConv on NHWC input, residual and output; W stays OIHW.", "nhwc Conv"},
    {"QMatMul", "A:T1 B:T2 BScale:tensor(float) BZero?:T2 Bias?:tensor(int32) BiasScale?:tensor(float) Z?:T1", "Y:T1",
     QTYPES,
     "transB:int=0 " QIO " " ACTIVATION " conv_scale:float=0 conv_zero_point:int=0 z_scale:float=1 z_zero_point:int=0",
     "Q(act(MatMul(DQ(A), DQ(B; BScale, BZero)) + DQ(Bias; BiasScale))) at (y_scale, y_zero_point), A "
     "dequantized by (x_scale, x_zero_point); B per tensor, or per column (its last axis; its first with "
     "transB = 1, which transposes a 2-D B). Any rank, as MatMul; Bias is per column. act: \"\", Relu, Clip. "
     "With Z (conv_scale > 0): Q(act(DQ(Q(product; conv_scale, conv_zero_point)) + DQ(Z; z_scale, "
     "z_zero_point))), Z shaped like Y or one value per column: a quantized Add after the product (a "
     "bias or residual Add of a QDQ graph) done in the epilogue.", "qmatmul"},
    {"QMatMulFloat", "A:T1 B:T2 BScale:tensor(float) BZero?:T2 Bias?:tensor(float)", "Y:tensor(float)", QTYPES,
     "transB:int=0 x_scale:float! x_zero_point:int=0 " ACTIVATION,
     "MatMul(DQ(A), DQ(B; BScale, BZero)) + Bias with a float result (ORT's MatMulIntegerToFloat), then an "
     "optional activation; A dequantized by (x_scale, x_zero_point).", "qmatmul_float"},
    {"MatMulIntegerToFloat", "A:T1 B:T2 AScale:tensor(float) BScale:tensor(float) AZero?:T1 BZero?:T2 Bias?:tensor(float)",
     "Y:tensor(float)", QTYPES, ACTIVATION,
     "MatMul(DQ(A; AScale, AZero), DQ(B; BScale, BZero)) + Bias with a float result, then an optional "
     "activation; unlike QMatMulFloat, A's scale and zero point are inputs (scalars) computed at run "
     "time: the dynamic quantization of ORT's quantize_dynamic (DynamicQuantizeLinear -> MatMulInteger "
     "-> Cast -> Mul by the scales). B per tensor or per column (its last axis); Bias per column.",
     "qmatmul_float"},
    {"ConvIntegerToFloat",
     "X:T1 W:T2 XScale:tensor(float) WScale:tensor(float) XZero?:T1 WZero?:T2 B?:tensor(float)", "Y:tensor(float)",
     QTYPES, CONV_ATTRS " " ACTIVATION,
     "act(Cast<float>(ConvInteger(X, W, XZero, WZero)) * (XScale * WScale) + B): Conv(DQ(X; XScale, XZero), "
     "DQ(W; WScale, WZero, axis 0)) + B with a float result, X's scale and zero point inputs (scalars) computed "
     "at run time: the dynamic quantization of a Conv by ORT's quantize_dynamic (DynamicQuantizeLinear -> "
     "ConvInteger -> Cast -> Mul by the scales [-> Add of the bias]). WScale and WZero per tensor or per output "
     "channel (1 or C_out values, any shape), B C_out values; NCHW.", "conv_float"},
    {"NhwcConvIntegerToFloat",
     "X:T1 W:T2 XScale:tensor(float) WScale:tensor(float) XZero?:T1 WZero?:T2 B?:tensor(float)", "Y:tensor(float)",
     QTYPES, CONV_ATTRS " " ACTIVATION, "ConvIntegerToFloat on NHWC input and output; W stays OIHW.",
     "nhwc_conv_float"},
    {"QAdd", "A:T1 B:T1", "C:T1", "T1=uint8,int8", QBINARY " " ACTIVATION,
     "Q(act(DQ(A) + DQ(B))) with ONNX broadcasting; act: \"\", Relu, Clip.", "as Add"},
    {"QMul", "A:T1 B:T1", "C:T1", "T1=uint8,int8", QBINARY " " ACTIVATION,
     "Q(act(DQ(A) * DQ(B))) with ONNX broadcasting; act: \"\", Relu, Clip.", "as Mul"},
    {"QLookup", "X:T1 Table:T2", "Y:T2", "T1=uint8,int8; T2=uint8,int8",
     "", "Y = Table[X] (uint8 X) or Table[X + 128] (int8 X); Table holds 256 values: any 8-bit to 8-bit "
     "function, e.g. Q(f(DQ(x))) for an elementwise f.", "lookup"},
};

#undef QTYPES
#undef QIO
#undef QBINARY
#undef ACTIVATION
#undef CONV_ATTRS
#undef POOL_ATTRS
#undef FLOATS

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) {
    size_t b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
  }
  return out;
}

std::vector<FusorParam> params(const std::string& text) {
  std::vector<FusorParam> out;
  for (const auto& item : split(text, ' ')) {
    FusorParam p;
    size_t colon = item.find(':');
    std::string n = item.substr(0, colon);
    p.type = colon == std::string::npos ? "T" : item.substr(colon + 1);
    if (n.size() > 3 && n.compare(n.size() - 3, 3, "...") == 0) {
      p.option = FusorParam::Option::Variadic;
      n.resize(n.size() - 3);
    } else if (!n.empty() && n.back() == '?') {
      p.option = FusorParam::Option::Optional;
      n.pop_back();
    }
    p.name = n;
    out.push_back(std::move(p));
  }
  return out;
}

FusorOpSignature parse(const FusorOpSpec& s) {
  static const char* kKinds[] = {"float", "int", "string", "floats", "ints", "strings", "tensor"};
  FusorOpSignature op;
  op.name = s.name;
  op.doc = s.doc;
  op.shape = s.shape;
  static const std::pair<const char*, ShapeRule> kRules[] = {
      {"", ShapeRule::LikeInput0},
      {"as", ShapeRule::As},
      {"nhwc", ShapeRule::Nhwc},
      {"matmul", ShapeRule::MatMul},
      {"attention", ShapeRule::Attention},
      {"packed_attention", ShapeRule::PackedAttention},
      {"winograd_conv", ShapeRule::WinogradConv},
      {"winograd_filter", ShapeRule::WinogradFilter},
      {"to_nchwc", ShapeRule::ToNchwc},
      {"from_nchwc", ShapeRule::FromNchwc},
      {"nchwc_conv", ShapeRule::NchwcConv},
      {"nchwc", ShapeRule::Nchwc},
      {"qmatmul", ShapeRule::QMatMul},
      {"qmatmul_float", ShapeRule::QMatMulFloat},
      {"conv_float", ShapeRule::ConvFloat},
      {"nhwc_conv_float", ShapeRule::NhwcConvFloat},
      {"lookup", ShapeRule::Lookup},
  };
  const size_t space = op.shape.find(' ');
  const std::string rule = op.shape.substr(0, space);
  op.shape_op = space == std::string::npos ? "" : op.shape.substr(space + 1);
  bool known = false;
  for (const auto& [name, r] : kRules) {
    if (rule != name) continue;
    op.shape_rule = r;
    known = true;
  }
  const bool takes_op = op.shape_rule == ShapeRule::As || op.shape_rule == ShapeRule::Nhwc ||
                        op.shape_rule == ShapeRule::Nchwc;
  if (!known || takes_op == op.shape_op.empty())
    throw std::logic_error("fusor_ops: bad shape rule '" + op.shape + "' in " + op.name);
  op.inputs = params(s.inputs);
  op.outputs = params(s.outputs);
  for (const auto& c : split(s.types, ';')) {
    size_t eq = c.find('=');
    if (eq == std::string::npos) throw std::logic_error("fusor_ops: bad type constraint '" + c + "' in " + op.name);
    FusorTypeConstraint tc;
    tc.name = split(c.substr(0, eq), ' ').at(0);
    tc.types = split(c.substr(eq + 1), ',');
    op.constraints.push_back(std::move(tc));
  }
  for (const auto& a : split(s.attrs, ' ')) {
    FusorAttr info;
    size_t colon = a.find(':');
    if (colon == std::string::npos) throw std::logic_error("fusor_ops: attribute '" + a + "' without a kind in " + op.name);
    info.name = a.substr(0, colon);
    info.kind = a.substr(colon + 1);
    size_t eq = info.kind.find('=');
    if (eq != std::string::npos) {
      info.has_default = true;
      info.default_text = info.kind.substr(eq + 1);
      info.kind.resize(eq);
    } else if (!info.kind.empty() && info.kind.back() == '!') {
      info.required = true;
      info.kind.pop_back();
    }
    bool known = false;
    for (const char* k : kKinds) known = known || info.kind == k;
    // The table is compiled in: a typo here is a bug in fusor, caught by the tests.
    if (!known) throw std::logic_error("fusor_ops: bad attribute kind '" + info.kind + "' in " + op.name);
    op.attrs.push_back(std::move(info));
  }
  return op;
}

}  // namespace

const std::vector<FusorOpSpec>& fusor_op_specs() { return kSpecs; }

const std::vector<FusorOpSignature>& fusor_op_signatures() {
  static const std::vector<FusorOpSignature> ops = [] {
    std::vector<FusorOpSignature> v;
    for (const auto& s : kSpecs) v.push_back(parse(s));
    return v;
  }();
  return ops;
}

const FusorOpSignature* find_fusor_op_signature(const std::string& name) {
  for (const auto& op : fusor_op_signatures())
    if (op.name == name) return &op;
  return nullptr;
}

}  // namespace fusor
