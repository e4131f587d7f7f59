// A tiny logger to stderr, shared by the engine and the CLI.
//
// One process-wide level (default Warn). Messages below it cost one comparison: the stream
// expression after FUSOR_LOG(...) is not evaluated. Lines look like "fusor: warn: text".
//   FUSOR_LOG(Info) << "loaded " << path << " in " << ms << " ms";
#pragma once
#include <sstream>
#include <string>
#include <string_view>

namespace fusor {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
inline bool log_enabled(LogLevel level) { return static_cast<int>(level) <= static_cast<int>(log_level()); }
// "error" | "warn" | "info" | "debug"; throws Error(Usage) listing them otherwise.
LogLevel parse_log_level(std::string_view text);
const char* log_level_name(LogLevel level);
// Writes one line (thread-safe: a line is never interleaved with another).
void log_line(LogLevel level, std::string_view message);

// Collects one message and writes it when destroyed.
class LogMessage {
 public:
  explicit LogMessage(LogLevel level) : level_(level) {}
  ~LogMessage() { log_line(level_, stream_.str()); }
  LogMessage(const LogMessage&) = delete;
  LogMessage& operator=(const LogMessage&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};

}  // namespace fusor

#define FUSOR_LOG(level)                                       \
  if (!::fusor::log_enabled(::fusor::LogLevel::level)) {       \
  } else                                                       \
    ::fusor::LogMessage(::fusor::LogLevel::level).stream()
