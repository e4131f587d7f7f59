// Reading rule files into the AST: syntax only (sema.h checks meaning; rules.h does both).
//
// Syntax errors become diagnostics, never exceptions: after an error the parser skips to the
// next line that starts with `rule`, `pattern` or `import`, so one run reports the errors of
// every rule. Imports resolve relative to the importing file; each file is read once, an
// import cycle or a missing file is reported at the `import` that causes it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/diagnostics.h"

namespace fusor::dsl {

// Parses one file's text; does not follow imports (their resolved_path is filled in).
std::unique_ptr<RuleFile> parse_rule_text(const std::string& path, const std::string& text, Diagnostics& diags);

// Reads and parses `paths` and everything they import. Files come back in load order: a
// file's imports before the file itself, each file once.
std::vector<std::unique_ptr<RuleFile>> parse_rule_files(const std::vector<std::string>& paths, Diagnostics& diags);

// Same, for a file given as text (`path` names it in messages and anchors its imports).
std::vector<std::unique_ptr<RuleFile>> parse_rule_files_from_text(const std::string& path, const std::string& text,
                                                                  Diagnostics& diags);

// The largest rule or provider file read (8 MiB; shipped files are a few kB).
constexpr size_t kMaxRuleFileBytes = size_t{8} << 20;
// Reads a whole regular file of at most kMaxRuleFileBytes; false when it cannot, with the
// reason in *why ("not a regular file (a FIFO)", "... over the ...-byte limit").
bool read_text_file(const std::string& path, std::string& out, std::string* why = nullptr);

}  // namespace fusor::dsl
