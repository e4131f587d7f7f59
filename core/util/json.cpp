#include "core/util/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/util/error.h"

namespace fusor::json {

namespace {
const char* kind_name(Value::Kind k) {
  static const char* names[] = {"null", "bool", "int", "double", "string", "array", "object"};
  return names[static_cast<int>(k)];
}
[[noreturn]] void mismatch(Value::Kind have, const char* want) {
  throw_internal(std::string("json: expected ") + want + ", have " + kind_name(have));
}
}  // namespace

bool Value::as_bool() const {
  if (!is_bool()) mismatch(kind(), "bool");
  return std::get<bool>(v_);
}
int64_t Value::as_int() const {
  if (!is_int()) mismatch(kind(), "int");
  return std::get<int64_t>(v_);
}
double Value::as_double() const {
  if (is_int()) return static_cast<double>(std::get<int64_t>(v_));
  if (kind() != Kind::Double) mismatch(kind(), "number");
  return std::get<double>(v_);
}
const std::string& Value::as_string() const {
  if (!is_string()) mismatch(kind(), "string");
  return std::get<std::string>(v_);
}
const Array& Value::as_array() const {
  if (!is_array()) mismatch(kind(), "array");
  return std::get<Array>(v_);
}
Array& Value::as_array() {
  if (!is_array()) mismatch(kind(), "array");
  return std::get<Array>(v_);
}
const Object& Value::as_object() const {
  if (!is_object()) mismatch(kind(), "object");
  return std::get<Object>(v_);
}

Value& Value::set(std::string key, Value v) {
  if (!is_object()) mismatch(kind(), "object");
  auto& o = std::get<Object>(v_);
  for (auto& [k, x] : o)
    if (k == key) return x = std::move(v);
  o.emplace_back(std::move(key), std::move(v));
  return o.back().second;
}

const Value* Value::find(std::string_view key) const {
  for (const auto& [k, x] : as_object())
    if (k == key) return &x;
  return nullptr;
}

const Value& Value::operator[](std::string_view key) const {
  const Value* v = find(key);
  if (!v) throw_internal("json: no key '" + std::string(key) + "'");
  return *v;
}

void Value::push_back(Value v) { as_array().push_back(std::move(v)); }

size_t Value::size() const {
  if (is_array()) return std::get<Array>(v_).size();
  if (is_object()) return std::get<Object>(v_).size();
  mismatch(kind(), "array or object");
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string Value::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

void Value::dump_to(std::string& out, int indent, int depth) const {
  auto newline = [&](int d) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<size_t>(indent * d), ' ');
  };
  switch (kind()) {
    case Kind::Null: out += "null"; break;
    case Kind::Bool: out += std::get<bool>(v_) ? "true" : "false"; break;
    case Kind::Int: out += std::to_string(std::get<int64_t>(v_)); break;
    case Kind::Double: {
      double d = std::get<double>(v_);
      if (!std::isfinite(d)) { out += "null"; break; }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d);
      // Prefer the shortest text that reads back to the same double.
      for (int prec = 1; prec <= 17; ++prec) {
        char shorter[32];
        std::snprintf(shorter, sizeof shorter, "%.*g", prec, d);
        if (std::strtod(shorter, nullptr) == d) { std::snprintf(buf, sizeof buf, "%s", shorter); break; }
      }
      out += buf;
      break;
    }
    case Kind::String: out += quote(std::get<std::string>(v_)); break;
    case Kind::Array: {
      const auto& a = std::get<Array>(v_);
      out += '[';
      for (size_t i = 0; i < a.size(); ++i) {
        if (i) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        a[i].dump_to(out, indent, depth + 1);
      }
      if (!a.empty()) newline(depth);
      out += ']';
      break;
    }
    case Kind::Object: {
      const auto& o = std::get<Object>(v_);
      out += '{';
      for (size_t i = 0; i < o.size(); ++i) {
        if (i) out += indent < 0 ? ", " : ",";
        newline(depth + 1);
        out += quote(o[i].first);
        out += ": ";
        o[i].second.dump_to(out, indent, depth + 1);
      }
      if (!o.empty()) newline(depth);
      out += '}';
      break;
    }
  }
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  Value document() {
    Value v = value(0);
    skip_ws();
    if (p_ != t_.size()) fail("trailing characters");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 512;

  [[noreturn]] void fail(const std::string& what) {
    throw_bad_input("json: at offset " + std::to_string(p_) + ": " + what);
  }
  void skip_ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    skip_ws();
    if (p_ < t_.size() && t_[p_] == c) { ++p_; return true; }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool literal(std::string_view word) {
    if (t_.substr(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    skip_ws();
    if (p_ >= t_.size()) fail("unexpected end of input");
    char c = t_[p_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return Value(string());
    if (literal("true")) return Value(true);
    if (literal("false")) return Value(false);
    if (literal("null")) return Value();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("unexpected character '") + c + "'");
  }

  Value object(int depth) {
    ++p_;
    Value o = Value::object();
    if (eat('}')) return o;
    do {
      skip_ws();
      if (p_ >= t_.size() || t_[p_] != '"') fail("expected a key string");
      std::string key = string();
      expect(':');
      o.set(std::move(key), value(depth + 1));
    } while (eat(','));
    expect('}');
    return o;
  }

  Value array(int depth) {
    ++p_;
    Value a = Value::array();
    if (eat(']')) return a;
    do a.push_back(value(depth + 1));
    while (eat(','));
    expect(']');
    return a;
  }

  unsigned hex4() {
    if (p_ + 4 > t_.size()) fail("short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = t_[p_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad \\u escape");
    }
    return v;
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    ++p_;  // opening quote
    std::string out;
    while (true) {
      if (p_ >= t_.size()) fail("unterminated string");
      char c = t_[p_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') { out += c; continue; }
      if (p_ >= t_.size()) fail("unterminated escape");
      char e = t_[p_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (!literal("\\u")) fail("lone high surrogate");
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("bad low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("lone low surrogate");
          }
          utf8(out, cp);
          break;
        }
        default: fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  Value number() {
    size_t start = p_;
    bool is_float = false;
    if (t_[p_] == '-') ++p_;
    auto digits = [&] {
      size_t s = p_;
      while (p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9') ++p_;
      if (p_ == s) fail("expected a digit");
    };
    if (p_ < t_.size() && t_[p_] == '0') ++p_;
    else digits();
    if (p_ < t_.size() && t_[p_] == '.') { ++p_; digits(); is_float = true; }
    if (p_ < t_.size() && (t_[p_] == 'e' || t_[p_] == 'E')) {
      ++p_;
      if (p_ < t_.size() && (t_[p_] == '+' || t_[p_] == '-')) ++p_;
      digits();
      is_float = true;
    }
    std::string text(t_.substr(start, p_ - start));
    if (!is_float) {
      errno = 0;
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno != ERANGE) return Value(static_cast<int64_t>(v));
    }
    return Value(std::strtod(text.c_str(), nullptr));
  }

  std::string_view t_;
  size_t p_ = 0;
};

}  // namespace

Value parse(std::string_view text) { return Parser(text).document(); }

}  // namespace fusor::json
