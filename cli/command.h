// The subcommand registry.
//
// Add a subcommand `fusor NAME`:
//   1. write cli/cmd_NAME.cpp defining `Command NAME_command()` in namespace fusor::cli;
//   2. add one line `X(NAME)` to FUSOR_COMMANDS in cli/commands.cpp.
// main() gives every subcommand --help/-h, -v/--verbose and --log-level, parses argv with the
// parser `declare` filled in, and maps exceptions to exit codes (see docs/cli.md):
//   fusor::Error Usage -> 1, BadInput -> 2, anything else -> 3.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "cli/args.h"

namespace fusor::cli {

enum ExitCode { kExitOk = 0, kExitUsage = 1, kExitBadInput = 2, kExitInternal = 3, kExitCancelled = 5 };  // 4: kExitTestFailed (cmd_rules_test.h)

struct Command {
  std::string name;      // "optimize"
  std::string summary;   // one line for `fusor --help`
  std::string usage;     // the synopsis after the name: "MODEL -o OUT.onnx [flags]"
  std::string description;  // a paragraph for `fusor NAME --help`
  // Declares the subcommand's own flags and positionals (the common ones are added by main).
  std::function<void(ArgParser&)> declare;
  // Does the work; prints to stdout; returns the exit code. Throws fusor::Error on failure.
  std::function<int(const Args&)> run;
};

// Every subcommand, in the order `fusor --help` lists them.
const std::vector<Command>& all_commands();
// nullptr when there is no such subcommand.
const Command* find_command(const std::string& name);

// The parser for a subcommand: its declared flags plus the common ones.
ArgParser make_parser(const Command& cmd);

}  // namespace fusor::cli
