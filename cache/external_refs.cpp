#include "cache/external_refs.h"

#include <algorithm>
#include <cstdint>

namespace fusor::cache {

namespace {

// One protobuf message's fields, in order. Every accessor returns false on malformed input.
class WireReader {
 public:
  explicit WireReader(std::string_view b) : b_(b) {}
  bool done() const { return pos_ >= b_.size(); }
  // Reads the next field's tag; a length-delimited field's bytes go to `payload`, a varint's
  // value to `value`; other wire types are skipped.
  bool next(uint32_t& field, int& wire, std::string_view& payload, uint64_t& value) {
    uint64_t tag = 0;
    if (!varint(tag)) return false;
    field = static_cast<uint32_t>(tag >> 3);
    wire = static_cast<int>(tag & 7);
    switch (wire) {
      case 0: return varint(value);
      case 1: return skip(8);
      case 5: return skip(4);
      case 2: {
        uint64_t n = 0;
        if (!varint(n) || n > b_.size() - pos_) return false;
        payload = b_.substr(pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n);
        return true;
      }
      default: return false;  // groups are not used by ONNX
    }
  }

 private:
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return false;
      auto c = static_cast<unsigned char>(b_[pos_++]);
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) return true;
    }
    return false;
  }
  bool skip(size_t n) {
    if (n > b_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  std::string_view b_;
  size_t pos_ = 0;
};

// Field numbers from onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphNode = 1, kGraphInitializer = 5, kGraphSparseInitializer = 15;
constexpr uint32_t kNodeAttribute = 5;
constexpr uint32_t kAttrTensor = 5, kAttrGraph = 6, kAttrTensors = 10, kAttrGraphs = 11, kAttrSparseTensor = 22,
                   kAttrSparseTensors = 23;
constexpr uint32_t kTensorExternalData = 13;
constexpr uint32_t kSparseValues = 1, kSparseIndices = 2;
constexpr uint32_t kEntryKey = 1, kEntryValue = 2;

using Out = std::vector<std::string>;

bool scan_tensor(std::string_view b, Out& out) {
  WireReader r(b);
  while (!r.done()) {
    uint32_t f; int w; std::string_view p; uint64_t v;
    if (!r.next(f, w, p, v)) return false;
    if (f != kTensorExternalData || w != 2) continue;
    WireReader e(p);
    std::string_view key, value;
    while (!e.done()) {
      uint32_t ef; int ew; std::string_view ep; uint64_t ev;
      if (!e.next(ef, ew, ep, ev)) return false;
      if (ef == kEntryKey && ew == 2) key = ep;
      if (ef == kEntryValue && ew == 2) value = ep;
    }
    if (key == "location") out.emplace_back(value);
  }
  return true;
}

bool scan_sparse(std::string_view b, Out& out) {
  WireReader r(b);
  while (!r.done()) {
    uint32_t f; int w; std::string_view p; uint64_t v;
    if (!r.next(f, w, p, v)) return false;
    if ((f == kSparseValues || f == kSparseIndices) && w == 2 && !scan_tensor(p, out)) return false;
  }
  return true;
}

bool scan_graph(std::string_view b, Out& out, int depth);

bool scan_node(std::string_view b, Out& out, int depth) {
  WireReader r(b);
  while (!r.done()) {
    uint32_t f; int w; std::string_view p; uint64_t v;
    if (!r.next(f, w, p, v)) return false;
    if (f != kNodeAttribute || w != 2) continue;
    WireReader a(p);
    while (!a.done()) {
      uint32_t af; int aw; std::string_view ap; uint64_t av;
      if (!a.next(af, aw, ap, av)) return false;
      if (aw != 2) continue;
      bool ok = true;
      if (af == kAttrTensor || af == kAttrTensors) ok = scan_tensor(ap, out);
      else if (af == kAttrSparseTensor || af == kAttrSparseTensors) ok = scan_sparse(ap, out);
      else if (af == kAttrGraph || af == kAttrGraphs) ok = scan_graph(ap, out, depth + 1);
      if (!ok) return false;
    }
  }
  return true;
}

bool scan_graph(std::string_view b, Out& out, int depth) {
  if (depth > 64) return false;  // a model nested this deep is not one we cache
  WireReader r(b);
  while (!r.done()) {
    uint32_t f; int w; std::string_view p; uint64_t v;
    if (!r.next(f, w, p, v)) return false;
    if (w != 2) continue;
    bool ok = true;
    if (f == kGraphInitializer) ok = scan_tensor(p, out);
    else if (f == kGraphSparseInitializer) ok = scan_sparse(p, out);
    else if (f == kGraphNode) ok = scan_node(p, out, depth);
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> external_data_locations(std::string_view model_bytes) {
  Out out;
  WireReader r(model_bytes);
  bool has_graph = false;
  while (!r.done()) {
    uint32_t f; int w; std::string_view p; uint64_t v;
    if (!r.next(f, w, p, v)) return std::nullopt;
    if (f == kModelGraph && w == 2) {
      has_graph = true;
      if (!scan_graph(p, out, 0)) return std::nullopt;
    }
  }
  if (!has_graph) return std::nullopt;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fusor::cache
