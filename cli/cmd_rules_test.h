// fusor rules test FILE... [--model M.onnx]... [--rule NAME]... [--require-tests] [--tolerance T] [--seed S] [--json]
// (the `test` action of cli/cmd_rules.cpp; the work is engine/ruletest).
#pragma once
#include <string>
#include <vector>

#include "cli/args.h"
#include "dsl/rules.h"

namespace fusor::cli {

// Exit code of `rules test` when a test or a model check failed (0: all passed).
inline constexpr int kExitTestFailed = 4;

// Declares the flags only `rules test` reads.
void add_rules_test_flags(ArgParser& p);

// Runs the tests of `set` (loaded and checked from `files`) and the --model checks, prints the
// report, returns the exit code.
int run_rules_test(const Args& args, const dsl::RuleSet& set, const std::vector<std::string>& files);

}  // namespace fusor::cli
