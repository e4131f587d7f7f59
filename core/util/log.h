// A tiny logger, shared by the engine and the CLI: the one way library code reports what is not
// an error (warnings, timings). Library code never writes to stdout/stderr itself
// (scripts/check_layers.py checks it): it returns diagnostics or logs them here.
//
// One process-wide level (default Warn). Messages below it cost one comparison: the stream
// expression after FUSOR_LOG(...) is not evaluated. The default sink writes lines to stderr as
// "fusor: warn: text"; a host sets its own with set_log_sink (the library API's
// fusor::set_log_handler, include/fusor/log.h).
//   FUSOR_LOG(Info) << "loaded " << path << " in " << ms << " ms";
#pragma once
#include <functional>
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
// Writes one message (thread-safe: a message is never interleaved with another, and the sink is
// called by one thread at a time).
void log_line(LogLevel level, std::string_view message);
// Where messages go; an empty function restores the default (stderr).
using LogSink = std::function<void(LogLevel level, std::string_view message)>;
void set_log_sink(LogSink sink);

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
