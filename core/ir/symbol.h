// Interned op types. An OpType is a small integer for "domain::op", so dispatch and pattern
// checks compare integers. The ONNX domain is "" ("ai.onnx" is folded into it).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace fusor {

class OpType {
 public:
  constexpr OpType() = default;
  // Interns (domain, name); thread-safe.
  OpType(std::string_view domain, std::string_view name);
  static OpType onnx(std::string_view name) { return OpType("", name); }

  uint32_t id() const { return id_; }
  const std::string& domain() const;
  const std::string& name() const;
  // "Conv" for the ONNX domain, "fusor.FusedConv" otherwise: the rule language's spelling, used in
  // every message, report and JSON key.
  std::string qualified() const;
  bool valid() const { return id_ != 0; }
  bool operator==(const OpType& o) const { return id_ == o.id_; }
  bool operator!=(const OpType& o) const { return id_ != o.id_; }
  bool operator<(const OpType& o) const { return id_ < o.id_; }

 private:
  uint32_t id_ = 0;
};

// Normalizes "ai.onnx" to "".
std::string_view canonical_domain(std::string_view domain);
inline constexpr const char* kFusorDomain = "fusor";

}  // namespace fusor

template <>
struct std::hash<fusor::OpType> {
  size_t operator()(const fusor::OpType& t) const noexcept { return t.id(); }
};
