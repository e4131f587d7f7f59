// The CLI's flag parser.
//
// A subcommand declares its flags and positionals on an ArgParser; parse() turns argv into Args
// or throws Error(Usage) naming the offending word. Accepted forms:
//   --flag value   --flag=value   -o value   -oVALUE   -v -v / -vv (short switches cluster)
//   --             everything after it is positional
// A flag declared repeatable may be given many times (values kept in order); any other flag
// given twice is a usage error. `--help` / `-h` anywhere before `--` short-circuits parsing, so
// `fusor CMD --help` prints help even with other arguments wrong.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusor::cli {

class Args {
 public:
  // Whether the flag (long name, no dashes) was given.
  bool has(std::string_view flag) const { return count(flag) > 0; }
  // Times the flag was given (-v -v: 2).
  int count(std::string_view flag) const;
  // The flag's value (last one for a repeatable flag); nullopt when not given.
  std::optional<std::string> get(std::string_view flag) const;
  std::string get_or(std::string_view flag, std::string dflt) const;
  // Every value of the flag, in command-line order.
  std::vector<std::string> all(std::string_view flag) const;
  // The flag's value as an integer in [lo, hi]; Usage error naming the flag otherwise.
  int64_t get_int(std::string_view flag, int64_t dflt, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) const;

  const std::vector<std::string>& positionals() const { return positionals_; }
  // Positional i, or "" when absent (required ones are checked by parse()).
  const std::string& positional(size_t i) const;
  bool help() const { return help_; }

 private:
  friend class ArgParser;
  std::vector<std::pair<std::string, std::string>> flags_;  // (name, value or "")
  std::vector<std::string> positionals_;
  bool help_ = false;
};

class ArgParser {
 public:
  // `program` as the user types it ("fusor optimize"); `synopsis` the arguments
  // ("MODEL -o OUT.onnx [flags]"); `description` a paragraph shown by --help.
  ArgParser(std::string program, std::string synopsis, std::string description = {});

  // A switch without a value.
  ArgParser& flag(std::string name, std::string help, char short_name = 0, bool repeatable = false);
  // A flag with a value, shown as --name VALUE_NAME.
  ArgParser& option(std::string name, std::string value_name, std::string help, bool repeatable = false,
                    char short_name = 0);
  // Positionals are matched in declaration order; only the last may be optional or variadic.
  ArgParser& positional(std::string name, std::string help, bool required = true, bool variadic = false);
  // Starts a titled group of flags in --help ("Optimization flags").
  ArgParser& section(std::string title);
  // Free text appended to --help (examples, notes).
  ArgParser& epilog(std::string text);

  Args parse(const std::vector<std::string>& argv) const;
  std::string help() const;
  const std::string& program() const { return program_; }

 private:
  struct Flag {
    std::string name, value_name, help, section;
    char short_name = 0;
    bool repeatable = false;
    bool takes_value() const { return !value_name.empty(); }
  };
  struct Positional {
    std::string name, help;
    bool required = true, variadic = false;
  };
  const Flag* find_long(std::string_view name) const;
  const Flag* find_short(char c) const;
  [[noreturn]] void unknown_flag(const std::string& word) const;

  std::string program_, synopsis_, description_, epilog_, section_;
  std::vector<Flag> flags_;
  std::vector<Positional> positionals_;
};

// Splits "a,b,c" at commas; empty items are kept (callers reject them).
std::vector<std::string> split_list(std::string_view text);

}  // namespace fusor::cli
