#include "dsl/parser.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/util/regular_file.h"
#include "dsl/ast_builder.h"
#include "dsl/grammar_errors.h"
#include "dsl/parse_tree.h"
#include "dsl/parse_util.h"

namespace fusor::dsl {
namespace p = tao::pegtl;
namespace g = grammar;
namespace fs = std::filesystem;

namespace {

using Input = p::memory_input<p::tracking_mode::eager, p::eol::lf_crlf>;

template <typename Rule>
std::unique_ptr<pt::node> parse_tree_of(Input& in) {
  return pt::parse<Rule, tree_selector, p::nothing, p::must_if<g::errors>::control>(in);
}

SourceLoc loc_of(const std::string& path, const p::position& pos) {
  return SourceLoc{path, static_cast<uint32_t>(pos.line), static_cast<uint32_t>(pos.column)};
}

}  // namespace

bool read_text_file(const std::string& path, std::string& out, std::string* why) {
  std::string problem = read_regular_file(path, out, kMaxRuleFileBytes);
  if (why) *why = problem;
  return problem.empty();
}

std::unique_ptr<RuleFile> parse_rule_text(const std::string& path, const std::string& text, Diagnostics& diags) {
  diags.add_source(path, text);
  auto file = std::make_unique<RuleFile>();
  file->path = path;
  const size_t errors_before = diags.error_count();
  if (size_t at = nesting_overflow(text); at != std::string::npos) {
    diags.error(position_of(path, text, at), "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
    file->has_errors = true;
    return file;
  }
  AstBuilder builder(path, diags);
  Input in(text.data(), text.data() + text.size(), path);

  p::parse<g::ws>(in);
  try {
    auto root = parse_tree_of<g::version_line>(in);
    if (root) {
      file->version = builder.version(*root->children.at(0));
      const auto& num = *root->children.at(0)->children.at(0);
      if (file->version != 1)
        diags.error(SourceLoc{path, static_cast<uint32_t>(num.m_begin.line), static_cast<uint32_t>(num.m_begin.column)},
                    "unsupported rules version " + std::to_string(file->version) + "; this fusor reads version 1");
    } else {
      diags.error(loc_of(path, in.position()), "expected the version line 'fusor-rules 1' first");
    }
  } catch (const p::parse_error& e) {
    diags.error(loc_of(path, e.positions().front()), std::string(e.message()));
  }

  for (;;) {
    p::parse<g::ws>(in);
    if (in.empty()) break;
    const size_t item_start = static_cast<size_t>(in.current() - text.data());
    size_t error_at = 0;
    try {
      auto root = parse_tree_of<g::top_item>(in);
      if (root && !root->children.empty()) {
        builder.add_top_item(*root->children.front(), *file);
        continue;
      }
      diags.error(loc_of(path, in.position()), "expected 'rule', 'pattern' or 'import'");
      error_at = item_start;
    } catch (const p::parse_error& e) {
      diags.error(loc_of(path, e.positions().front()), std::string(e.message()));
      error_at = e.positions().front().byte;
    }
    const size_t resume = recovery_point(text, item_start, error_at, {"rule", "pattern", "import"});
    const size_t here = static_cast<size_t>(in.current() - text.data());
    if (resume <= here) break;  // cannot happen: recovery_point is past item_start
    in.bump(resume - here);
  }

  fs::path base = fs::path(path).parent_path();
  for (auto& imp : file->imports) imp.resolved_path = (base / imp.path).lexically_normal().string();
  file->has_errors = diags.error_count() > errors_before;
  return file;
}

namespace {

class Loader {
 public:
  explicit Loader(Diagnostics& diags) : diags_(diags) {}

  void load(const std::string& path, const std::string* text, const ImportDecl* from) {
    std::error_code ec;
    std::string key = fs::weakly_canonical(fs::path(path), ec).string();
    if (ec) key = fs::path(path).lexically_normal().string();
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (stack_[i].first != key) continue;
      std::string chain;
      for (size_t j = i; j < stack_.size(); ++j) chain += stack_[j].second + " -> ";
      chain += path;
      diags_.error(from ? from->loc : SourceLoc{path}, "import cycle: " + chain);
      return;
    }
    if (!loaded_.insert(key).second) return;
    std::string contents;
    if (!text) {
      std::string why;
      if (!read_text_file(path, contents, &why)) {
        if (from)
          diags_.error(from->loc, "cannot open imported file '" + from->path + "' (looked for '" + path + "'): " + why);
        else
          diags_.error(SourceLoc{path}, "cannot open rules file '" + path + "': " + why);
        return;
      }
      text = &contents;
    }
    auto file = parse_rule_text(path, *text, diags_);
    file->source = *text;
    stack_.emplace_back(key, path);
    const size_t errors_before = diags_.error_count();
    for (const auto& imp : file->imports) load(imp.resolved_path, nullptr, &imp);
    if (diags_.error_count() > errors_before) file->has_errors = true;
    stack_.pop_back();
    files_.push_back(std::move(file));
  }

  std::vector<std::unique_ptr<RuleFile>> take() { return std::move(files_); }

 private:
  Diagnostics& diags_;
  std::vector<std::pair<std::string, std::string>> stack_;  // (canonical key, path as named)
  std::set<std::string> loaded_;
  std::vector<std::unique_ptr<RuleFile>> files_;
};

}  // namespace

std::vector<std::unique_ptr<RuleFile>> parse_rule_files(const std::vector<std::string>& paths, Diagnostics& diags) {
  Loader loader(diags);
  for (const auto& path : paths) loader.load(path, nullptr, nullptr);
  return loader.take();
}

std::vector<std::unique_ptr<RuleFile>> parse_rule_files_from_text(const std::string& path, const std::string& text,
                                                                  Diagnostics& diags) {
  Loader loader(diags);
  loader.load(path, &text, nullptr);
  return loader.take();
}

}  // namespace fusor::dsl
