// The list of subcommands. One X(name) line per subcommand; cli/cmd_<name>.cpp defines
// `Command <name>_command()`. See cli/command.h.
#include "cli/command.h"

#define FUSOR_COMMANDS(X) \
  X(inspect)              \
  X(optimize)            \
  X(run)                 \
  X(bench)               \
  X(cache)               \
  X(rules)               \
  X(explain)

namespace fusor::cli {

#define FUSOR_DECLARE_COMMAND(name) Command name##_command();
FUSOR_COMMANDS(FUSOR_DECLARE_COMMAND)
#undef FUSOR_DECLARE_COMMAND

const std::vector<Command>& all_commands() {
#define FUSOR_LIST_COMMAND(name) name##_command(),
  static const std::vector<Command> commands = {FUSOR_COMMANDS(FUSOR_LIST_COMMAND)};
#undef FUSOR_LIST_COMMAND
  return commands;
}

const Command* find_command(const std::string& name) {
  for (const Command& c : all_commands())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace fusor::cli
