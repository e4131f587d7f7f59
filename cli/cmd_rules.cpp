// fusor rules check FILE... [--opset N]
// fusor rules list [FILE...] [--provider P] [--level L] [--json]
// fusor rules test FILE... [--model M.onnx]... [--rule NAME]... [--require-tests] [--tolerance T] [--seed S] [--json]
//
// check: parses, checks and lowers the files (what `optimize --rules` would run); diagnostics on
// stderr, exit 2 when any is an error.
// list: the rules that run at a level for a provider (the provider's shipped files, or the FILEs
// given), in priority order, with FILE:LINE.
// test: runs the files' test blocks and checks the rules on --model models (cli/cmd_rules_test.h).
#include <iostream>

#include "cli/cmd_rules_test.h"
#include "cli/command.h"
#include "dsl/rules.h"
#include "core/util/error.h"
#include "dsl/lower.h"
#include "engine/session/optimize.h"
#include "core/util/json.h"

namespace fusor::cli {

namespace {

// The rules a level selects; `disabled` lists what `basic` would (no rule has that level).
OptLevel rule_level(OptLevel l) { return l == OptLevel::Disabled ? OptLevel::Basic : l; }

// Loads and lowers; prints diagnostics; throws BadInput on errors.
dsl::RuleSet load_checked(const std::vector<std::string>& files, int opset, OptLevel level,
                          const std::string& provider, std::vector<const dsl::RuleDecl*>& selected) {
  dsl::CheckOptions opts;
  opts.opset = opset;
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules(files, opts, diags);
  if (!diags.has_errors()) {
    selected = set.select(level, provider);
    // Lower every rule (not only the selected ones) so `check` reports what the engine cannot run.
    lower_rules(set.rules, diags);
  }
  std::cerr << diags.str();
  if (diags.has_errors())
    throw_bad_input(std::to_string(diags.error_count()) + " error(s) in rule files");
  return set;
}

int run_rules(const Args& args) {
  const std::vector<std::string>& pos = args.positionals();
  if (pos.empty()) throw_usage("missing action: check, list or test");
  const std::string& action = pos[0];
  std::vector<std::string> files(pos.begin() + 1, pos.end());
  int opset = static_cast<int>(args.get_int("opset", 0, 0, 100));
  if (action == "check") {
    if (files.empty()) throw_usage("rules check: give at least one rule file");
    std::vector<const dsl::RuleDecl*> selected;
    dsl::RuleSet set = load_checked(files, opset, OptLevel::All, "", selected);
    std::cout << "ok: " << set.rules.size() << " rule(s) in " << set.files.size() << " file(s)\n";
    return kExitOk;
  }
  if (action == "test") {
    if (files.empty()) throw_usage("rules test: give at least one rule file");
    std::vector<const dsl::RuleDecl*> selected;
    dsl::RuleSet set = load_checked(files, opset, OptLevel::All, "", selected);
    return run_rules_test(args, set, files);
  }
  if (action != "list") throw_usage("unknown action '" + action + "' (known: check, list, test)");
  std::string provider = args.get_or("provider", "cpu");
  check_provider(provider);
  OptLevel level = parse_opt_level(args.get_or("level", "all"));
  if (files.empty()) files = default_rule_files(level, provider);
  std::vector<const dsl::RuleDecl*> selected;
  dsl::RuleSet set;  // owns what `selected` points to
  if (!files.empty()) set = load_checked(files, opset, rule_level(level), provider, selected);
  if (args.has("json")) {
    json::Value arr = json::Value::array();
    for (const dsl::RuleDecl* r : selected) {
      json::Value o = json::Value::object();
      o.set("name", r->name);
      o.set("level", opt_level_name(r->level));
      json::Value provs = json::Value::array();
      for (const auto& p : r->providers) provs.push_back(p.name);
      o.set("providers", provs);
      o.set("benefit", r->benefit ? *r->benefit : dsl::default_benefit(*r));
      o.set("location", r->loc.file + ":" + std::to_string(r->loc.line));
      arr.push_back(o);
    }
    std::cout << arr.dump(2) << "\n";
    return kExitOk;
  }
  for (const dsl::RuleDecl* r : selected) {
    std::cout << r->name << "  " << opt_level_name(r->level) << "  " << r->loc.file << ":" << r->loc.line << "\n";
  }
  std::cout << selected.size() << " rule(s) at level " << opt_level_name(level) << " for " << provider << "\n";
  return kExitOk;
}

}  // namespace

Command rules_command() {
  Command c;
  c.name = "rules";
  c.summary = "check, list or test rule files";
  c.usage = "check FILE... [--opset N] | list [FILE...] [--provider P] [--level L] [--json] |\n"
            "       test FILE... [--model M.onnx]... [--rule NAME]... [--require-tests] [--tolerance T] [--seed S]\n"
            "            [--json]";
  c.description =
      "check: parse, check and lower rule files; diagnostics on stderr, exit 2 on any error.\n"
      "list: the rules that run at LEVEL for provider P in priority order, with FILE:LINE (the\n"
      "provider's shipped rule files unless FILEs are given).\n"
      "test: run the files' test blocks (each rule alone on its instantiated pattern, outputs\n"
      "compared on random inputs) and, with --model, check every rule that fires on the model;\n"
      "exit 4 when a test or check fails (docs/cli.md).";
  c.declare = [](ArgParser& p) {
    p.positional("ACTION", "check, list or test")
        .positional("FILE", "rule files", false, true)
        .option("opset", "N", "check ops at ONNX opset N (default: the newest known)")
        .option("provider", "NAME", "list: the provider (default cpu)")
        .option("level", "LEVEL", "list: the optimization level (default all)")
        .flag("json", "list, test: print JSON");
    add_rules_test_flags(p);
  };
  c.run = run_rules;
  return c;
}

}  // namespace fusor::cli
