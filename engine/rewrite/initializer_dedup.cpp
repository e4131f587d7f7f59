#include "engine/rewrite/passes.h"

#include <cstring>

namespace fusor {

static std::string dedup_key(const Tensor& t) {
  // FNV-1a style over the bytes; equal keys are confirmed with bit_equal.
  uint64_t h = 1469598103934665603ull;
  if (t.dtype() == DataType::String) {
    for (const auto& s : t.string_data())
      for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  } else {
    // Eight bytes per step (weights are megabytes, hashed when created and when a rewrite reuses
    // them; byte steps took most of resnet18's optimize time), then the tail bytewise.
    const unsigned char* p = static_cast<const unsigned char*>(t.raw());
    const size_t n = t.nbytes();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      h = (h ^ w) * 1099511628211ull;
    }
    for (; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  return std::to_string(static_cast<int>(t.dtype())) + ":" + shape_str(t.shape()) + ":" + std::to_string(h);
}

static bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DataType::String || b.dtype() == DataType::String)
    return a.dtype() == b.dtype() && a.shape() == b.shape() && a.string_data() == b.string_data();
  return a.bit_equal(b);
}

bool InitializerDedup::add(ValueId v, std::vector<NodeId>& touched) {
  const Value& val = g_.value(v);
  if (!val.alive || !val.is_constant_initializer() || val.is_graph_output) return false;
  auto& bucket = index_[dedup_key(*val.constant)];
  for (ValueId k : bucket) {
    if (k == v) return false;
    const Value& kv = g_.value(k);
    if (!kv.alive || !kv.constant || !same_tensor(*kv.constant, *val.constant)) continue;
    // Keep the one with the smaller id, so the result does not depend on visiting order.
    ValueId keep = std::min(k, v), drop = std::max(k, v);
    for (const Use& u : g_.value(drop).uses) touched.push_back(u.node);
    g_.replace_all_uses(drop, keep);
    g_.remove_value(drop);
    for (ValueId& b : bucket)
      if (b == drop) b = keep;
    return true;
  }
  bucket.push_back(v);
  return false;
}

int InitializerDedup::run_all(std::vector<NodeId>& touched) {
  int merged = 0;
  for (ValueId v : g_.initializers()) merged += add(v, touched) ? 1 : 0;
  return merged;
}

}  // namespace fusor
