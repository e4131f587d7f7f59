// fusor's entry point: global flags, subcommand dispatch, and the mapping from exceptions to exit
// codes (0 ok, 1 usage, 2 bad input, 3 internal). Nothing escapes main: every failure becomes a
// one-line message on stderr and an exit code.
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/util/error.h"
#include "core/util/log.h"
#include "dsl/suggest.h"

namespace fusor::cli {
namespace {

const char* kCommonSection = "common flags";

void print_global_help() {
  std::string h =
      "usage: fusor [--version] [--help] [-v | --log-level LEVEL] COMMAND [ARGS]\n"
      "\n"
      "fusor loads ONNX models, rewrites them with declarative rules and runs them on its own CPU\n"
      "kernels.\n"
      "\n"
      "commands:\n";
  for (const Command& c : all_commands()) {
    std::string line = "  " + c.name;
    line.append(line.size() < 14 ? 14 - line.size() : 1, ' ');
    h += line + c.summary + "\n";
  }
  h +=
      "\n"
      "global flags:\n"
      "  -h, --help                  this help; `fusor COMMAND --help` for a command's flags\n"
      "  --version                   print the version\n"
      "  -v, --verbose               more log output on stderr (-v: info, -vv: debug)\n"
      "  --log-level LEVEL           error | warn | info | debug (default warn)\n"
      "\n"
      "exit codes: 0 ok, 1 usage error, 2 bad input, 3 internal error, 4 a check failed (rules test),\n"
      "5 cancelled (--timeout). See docs/cli.md.\n";
  std::fputs(h.c_str(), stdout);
}

// Applies -v/--verbose and --log-level: the explicit level wins over -v.
void apply_log_flags(int verbose, const std::string* level) {
  if (level) {
    set_log_level(parse_log_level(*level));
  } else if (verbose > 0) {
    set_log_level(verbose >= 2 ? LogLevel::Debug : LogLevel::Info);
  }
}

int run_main(const std::vector<std::string>& argv) {
  // Global flags come before the subcommand name.
  size_t i = 0;
  int verbose = 0;
  std::string level;
  bool has_level = false;
  for (; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.empty() || a[0] != '-') break;
    if (a == "--help" || a == "-h") {
      print_global_help();
      return kExitOk;
    } else if (a == "--version") {
      std::printf("fusor %s\n", FUSOR_VERSION);
      return kExitOk;
    } else if (a == "-v" || a == "--verbose") {
      ++verbose;
    } else if (a == "-vv") {
      verbose += 2;
    } else if (a == "--log-level") {
      if (i + 1 >= argv.size()) throw_usage("--log-level needs a value (error|warn|info|debug)");
      level = argv[++i], has_level = true;
    } else if (a.rfind("--log-level=", 0) == 0) {
      level = a.substr(12), has_level = true;
    } else {
      throw_usage("unknown flag '" + a + "' (see 'fusor --help')");
    }
  }
  apply_log_flags(verbose, has_level ? &level : nullptr);
  if (i >= argv.size()) {
    print_global_help();
    return kExitUsage;
  }
  const Command* cmd = find_command(argv[i]);
  if (!cmd) {
    std::string known;
    std::vector<std::string> names;
    for (const Command& c : all_commands()) {
      known += (known.empty() ? "" : ", ") + c.name;
      names.push_back(c.name);
    }
    throw_usage("unknown command '" + argv[i] + "'" + dsl::did_you_mean(argv[i], names) + " (known: " + known + ")");
  }
  ArgParser parser = make_parser(*cmd);
  Args args = parser.parse(std::vector<std::string>(argv.begin() + static_cast<long>(i) + 1, argv.end()));
  if (args.help()) {
    std::fputs(parser.help().c_str(), stdout);
    return kExitOk;
  }
  auto sub_level = args.get("log-level");
  if (sub_level || args.count("verbose") > 0)
    apply_log_flags(verbose + args.count("verbose"), sub_level ? &*sub_level : (has_level ? &level : nullptr));
  FUSOR_LOG(Debug) << "running '" << cmd->name << "'";
  return cmd->run(args);
}

}  // namespace

ArgParser make_parser(const Command& cmd) {
  ArgParser p("fusor " + cmd.name, cmd.usage, cmd.description);
  if (cmd.declare) cmd.declare(p);
  p.section(kCommonSection)
      .flag("help", "this help", 'h')
      .flag("verbose", "more log output on stderr (-v: info, -vv: debug)", 'v', /*repeatable=*/true)
      .option("log-level", "LEVEL", "error | warn | info | debug (default warn)");
  return p;
}

}  // namespace fusor::cli

int main(int argc, char** argv) {
  using namespace fusor;
  std::vector<std::string> args(argv + 1, argv + argc);
  // The subcommand's name, for messages; empty before dispatch.
  std::string where = "fusor";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--log-level") { ++i; continue; }
    if (!args[i].empty() && args[i][0] != '-') {
      if (cli::find_command(args[i])) where = "fusor " + args[i];
      break;
    }
  }
  try {
    int rc = cli::run_main(args);
    std::fflush(stdout);
    return rc;
  } catch (const Error& e) {
    std::fflush(stdout);
    switch (e.kind()) {
      case ErrorKind::Usage:
        std::fprintf(stderr, "%s: usage error: %s\n", where.c_str(), e.what());
        std::fprintf(stderr, "see '%s --help'\n", where.c_str());
        return cli::kExitUsage;
      case ErrorKind::BadInput:
        // The diagnostics behind the error (FILE:LINE:COL, source line, caret) come first.
        std::fputs(e.details().c_str(), stderr);
        std::fprintf(stderr, "%s: error: %s\n", where.c_str(), e.what());
        return cli::kExitBadInput;
      case ErrorKind::Cancelled:
        std::fprintf(stderr, "%s: cancelled: %s\n", where.c_str(), e.what());
        return cli::kExitCancelled;
      case ErrorKind::Internal:
        break;
    }
    std::fprintf(stderr, "%s: internal error: %s\n", where.c_str(), e.what());
    return cli::kExitInternal;
  } catch (const std::bad_alloc&) {
    // A model or input too big for the machine is bad input, not a bug (issue 21).
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: out of memory: the model or its inputs need more than this process can get\n",
                 where.c_str());
    return cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: internal error: %s\n", where.c_str(), e.what());
    return cli::kExitInternal;
  } catch (...) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: internal error: unknown exception\n", where.c_str());
    return cli::kExitInternal;
  }
}
