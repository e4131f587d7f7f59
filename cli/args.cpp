#include "cli/args.h"

#include <algorithm>
#include <charconv>

#include "core/util/error.h"
#include "dsl/suggest.h"

namespace fusor::cli {

int Args::count(std::string_view flag) const {
  return static_cast<int>(std::count_if(flags_.begin(), flags_.end(), [&](const auto& f) { return f.first == flag; }));
}

std::optional<std::string> Args::get(std::string_view flag) const {
  for (auto it = flags_.rbegin(); it != flags_.rend(); ++it)
    if (it->first == flag) return it->second;
  return std::nullopt;
}

std::string Args::get_or(std::string_view flag, std::string dflt) const {
  auto v = get(flag);
  return v ? *v : std::move(dflt);
}

std::vector<std::string> Args::all(std::string_view flag) const {
  std::vector<std::string> out;
  for (const auto& [n, v] : flags_)
    if (n == flag) out.push_back(v);
  return out;
}

int64_t Args::get_int(std::string_view flag, int64_t dflt, int64_t lo, int64_t hi) const {
  auto text = get(flag);
  if (!text) return dflt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || text->empty())
    throw_usage("--" + std::string(flag) + ": expected an integer, got '" + *text + "'");
  if (v < lo || v > hi)
    throw_usage("--" + std::string(flag) + ": " + *text + " is out of range [" + std::to_string(lo) + ", " +
                (hi == INT64_MAX ? std::string("inf") : std::to_string(hi)) + "]");
  return v;
}

const std::string& Args::positional(size_t i) const {
  static const std::string empty;
  return i < positionals_.size() ? positionals_[i] : empty;
}

ArgParser::ArgParser(std::string program, std::string synopsis, std::string description)
    : program_(std::move(program)), synopsis_(std::move(synopsis)), description_(std::move(description)) {}

ArgParser& ArgParser::flag(std::string name, std::string help, char short_name, bool repeatable) {
  flags_.push_back(Flag{std::move(name), "", std::move(help), section_, short_name, repeatable});
  return *this;
}

ArgParser& ArgParser::option(std::string name, std::string value_name, std::string help, bool repeatable,
                             char short_name) {
  flags_.push_back(Flag{std::move(name), std::move(value_name), std::move(help), section_, short_name, repeatable});
  return *this;
}

ArgParser& ArgParser::positional(std::string name, std::string help, bool required, bool variadic) {
  positionals_.push_back(Positional{std::move(name), std::move(help), required, variadic});
  return *this;
}

ArgParser& ArgParser::section(std::string title) {
  section_ = std::move(title);
  return *this;
}

ArgParser& ArgParser::epilog(std::string text) {
  epilog_ = std::move(text);
  return *this;
}

const ArgParser::Flag* ArgParser::find_long(std::string_view name) const {
  for (const Flag& f : flags_)
    if (f.name == name) return &f;
  return nullptr;
}

const ArgParser::Flag* ArgParser::find_short(char c) const {
  for (const Flag& f : flags_)
    if (f.short_name == c) return &f;
  return nullptr;
}

void ArgParser::unknown_flag(const std::string& word) const {
  std::string msg = "unknown flag '" + word + "' for '" + program_ + "'";
  std::string_view bare = word;
  while (!bare.empty() && bare.front() == '-') bare.remove_prefix(1);
  bare = bare.substr(0, bare.find('='));
  const Flag* best = nullptr;
  size_t best_d = 3;  // suggest only close matches
  for (const Flag& f : flags_) {
    size_t d = dsl::edit_distance(std::string(bare), f.name);
    if (d < best_d) best_d = d, best = &f;
  }
  if (best) msg += " (did you mean --" + best->name + "?)";
  throw_usage(msg);
}

Args ArgParser::parse(const std::vector<std::string>& argv) const {
  Args out;
  for (const std::string& a : argv) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      out.help_ = true;
      return out;
    }
  }
  auto add = [&](const Flag& f, std::string value) {
    if (!f.repeatable && out.has(f.name)) throw_usage("--" + f.name + " given more than once");
    out.flags_.emplace_back(f.name, std::move(value));
  };
  bool only_positionals = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (only_positionals || a.size() < 2 || a[0] != '-') {
      out.positionals_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positionals = true;
      continue;
    }
    if (a[1] == '-') {  // --name, --name=value, --name value
      size_t eq = a.find('=');
      std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const Flag* f = find_long(name);
      if (!f) unknown_flag(a);
      if (!f->takes_value()) {
        if (eq != std::string::npos) throw_usage("--" + name + " takes no value");
        add(*f, "");
      } else if (eq != std::string::npos) {
        add(*f, a.substr(eq + 1));
      } else {
        if (i + 1 >= argv.size()) throw_usage("--" + name + " needs a value (" + f->value_name + ")");
        add(*f, argv[++i]);
      }
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {  // -v, -vv, -o OUT, -oOUT
      const Flag* f = find_short(a[k]);
      if (!f) unknown_flag(k == 1 ? a : std::string("-") + a[k]);
      if (!f->takes_value()) {
        add(*f, "");
        continue;
      }
      if (k + 1 < a.size()) {
        add(*f, a.substr(k + 1));
      } else {
        if (i + 1 >= argv.size()) throw_usage(std::string("-") + a[k] + " needs a value (" + f->value_name + ")");
        add(*f, argv[++i]);
      }
      break;
    }
  }
  size_t required = 0;
  bool variadic = false;
  for (const Positional& p : positionals_) {
    required += p.required ? 1 : 0;
    variadic = variadic || p.variadic;
  }
  if (out.positionals_.size() < required)
    throw_usage("missing " + positionals_[out.positionals_.size()].name + " (usage: " + program_ + " " + synopsis_ + ")");
  if (!variadic && out.positionals_.size() > positionals_.size())
    throw_usage("unexpected argument '" + out.positionals_[positionals_.size()] + "'");
  return out;
}

std::string ArgParser::help() const {
  std::string h = "usage: " + program_ + " " + synopsis_ + "\n";
  if (!description_.empty()) h += "\n" + description_ + "\n";
  auto column = [](std::string left, const std::string& right) {
    std::string line = "  " + left;
    if (line.size() < 28) line.append(28 - line.size(), ' ');
    else line += "\n" + std::string(28, ' ');
    // Indent continuation lines of multi-line help under the help column.
    for (char c : right) {
      line += c;
      if (c == '\n') line.append(28, ' ');
    }
    return line + "\n";
  };
  if (!positionals_.empty()) {
    h += "\narguments:\n";
    for (const Positional& p : positionals_) h += column(p.name + (p.variadic ? "..." : ""), p.help);
  }
  std::string current = "\x01";
  for (const Flag& f : flags_) {
    if (f.section != current) {
      current = f.section;
      h += '\n';
      h += current.empty() ? std::string("flags") : current;
      h += ":\n";
    }
    std::string left = f.short_name ? std::string("-") + f.short_name + ", " : std::string();
    left += "--" + f.name;
    if (f.takes_value()) left += " " + f.value_name;
    std::string right = f.help;
    if (f.repeatable) right += " (repeatable)";
    h += column(left, right);
  }
  if (!epilog_.empty()) h += "\n" + epilog_ + "\n";
  return h;
}

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    out.emplace_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace fusor::cli
