// A small JSON document type for fusor's reports (`--json`) and their tests.
//
// Objects keep insertion order, so reports print their keys in the order the code adds them
// (the order docs/cli.md lists). Numbers are int64 or double; dump() writes integers without a
// fraction and doubles with up to 17 significant digits (non-finite doubles become null).
// parse() accepts RFC 8259 JSON and throws Error(BadInput) with the offset of the first error.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace fusor::json {

class Value;
using Array = std::vector<Value>;
using Object = std::vector<std::pair<std::string, Value>>;

class Value {
 public:
  enum class Kind { Null, Bool, Int, Double, String, Array, Object };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int v) : v_(static_cast<int64_t>(v)) {}
  Value(int64_t v) : v_(v) {}
  Value(uint64_t v) : v_(static_cast<int64_t>(v)) {}
  Value(double v) : v_(v) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(Array a) : v_(std::move(a)) {}
  Value(Object o) : v_(std::move(o)) {}
  template <typename T>
  Value(const std::map<std::string, T>& m) : v_(Object{}) {
    for (const auto& [k, x] : m) set(k, Value(x));
  }
  static Value array() { return Value(Array{}); }
  static Value object() { return Value(Object{}); }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_null() const { return kind() == Kind::Null; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_number() const { return kind() == Kind::Int || kind() == Kind::Double; }
  bool is_string() const { return kind() == Kind::String; }
  bool is_array() const { return kind() == Kind::Array; }
  bool is_object() const { return kind() == Kind::Object; }

  // Accessors throw Error(Internal) on a kind mismatch.
  bool as_bool() const;
  int64_t as_int() const;
  double as_double() const;  // ints convert
  const std::string& as_string() const;
  const Array& as_array() const;
  Array& as_array();
  const Object& as_object() const;

  // Objects: set replaces an existing key or appends; find returns nullptr when absent.
  Value& set(std::string key, Value v);
  const Value* find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  // Throws Error(Internal) naming the key when absent.
  const Value& operator[](std::string_view key) const;
  // Arrays.
  void push_back(Value v);
  const Value& operator[](size_t i) const { return as_array().at(i); }
  size_t size() const;

  // indent < 0: one line; otherwise pretty-printed with that many spaces per level.
  std::string dump(int indent = -1) const;

 private:
  void dump_to(std::string& out, int indent, int depth) const;
  std::variant<std::monostate, bool, int64_t, double, std::string, Array, Object> v_;
};

Value parse(std::string_view text);
// `s` as a JSON string literal, quotes included.
std::string quote(std::string_view s);

}  // namespace fusor::json
