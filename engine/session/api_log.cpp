// include/fusor/log.h over the engine's logger (core/util/log.h).
#include "fusor/log.h"

#include "core/util/log.h"

namespace fusor {

namespace {
LogLevel level_of(LogSeverity s) {
  switch (s) {
    case LogSeverity::Error: return LogLevel::Error;
    case LogSeverity::Warning: return LogLevel::Warn;
    case LogSeverity::Info: return LogLevel::Info;
    case LogSeverity::Debug: return LogLevel::Debug;
  }
  return LogLevel::Warn;
}
LogSeverity severity_of(LogLevel l) {
  switch (l) {
    case LogLevel::Error: return LogSeverity::Error;
    case LogLevel::Warn: return LogSeverity::Warning;
    case LogLevel::Info: return LogSeverity::Info;
    case LogLevel::Debug: return LogSeverity::Debug;
  }
  return LogSeverity::Warning;
}
}  // namespace

void set_log_handler(LogHandler handler) {
  if (!handler) {
    set_log_sink(nullptr);
    return;
  }
  set_log_sink([h = std::move(handler)](LogLevel level, std::string_view message) {
    h(severity_of(level), std::string(message));
  });
}

void set_log_severity(LogSeverity max) { set_log_level(level_of(max)); }

}  // namespace fusor
