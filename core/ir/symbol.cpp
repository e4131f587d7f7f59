#include "core/ir/symbol.h"

#include <deque>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace fusor {
namespace {

struct Interner {
  std::shared_mutex mu;
  std::unordered_map<std::string, uint32_t> ids;  // key: domain + '\0' + name
  std::deque<std::pair<std::string, std::string>> names{{"", "<invalid>"}};  // stable references
};

Interner& interner() {
  static Interner* in = new Interner();  // never destroyed: OpTypes may outlive static teardown
  return *in;
}

}  // namespace

std::string_view canonical_domain(std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; }

OpType::OpType(std::string_view domain, std::string_view name) {
  domain = canonical_domain(domain);
  std::string key;
  key.reserve(domain.size() + name.size() + 1);
  key.append(domain).push_back('\0');
  key.append(name);
  Interner& in = interner();
  {
    std::shared_lock lock(in.mu);
    auto it = in.ids.find(key);
    if (it != in.ids.end()) {
      id_ = it->second;
      return;
    }
  }
  std::unique_lock lock(in.mu);
  auto [it, inserted] = in.ids.emplace(std::move(key), static_cast<uint32_t>(in.names.size()));
  if (inserted) in.names.emplace_back(std::string(domain), std::string(name));
  id_ = it->second;
}

const std::string& OpType::domain() const {
  Interner& in = interner();
  std::shared_lock lock(in.mu);
  return in.names[id_].first;
}

const std::string& OpType::name() const {
  Interner& in = interner();
  std::shared_lock lock(in.mu);
  return in.names[id_].second;
}

std::string OpType::qualified() const {
  const std::string& d = domain();
  return d.empty() ? name() : d + "." + name();
}

}  // namespace fusor
