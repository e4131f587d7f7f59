#include "core/util/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "core/util/error.h"

namespace fusor {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::Warn)};
std::mutex g_write;
LogSink g_sink;  // guarded by g_write
}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard<std::mutex> lock(g_write);
  g_sink = std::move(sink);
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warn";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
  }
  return "?";
}

LogLevel parse_log_level(std::string_view text) {
  for (LogLevel l : {LogLevel::Error, LogLevel::Warn, LogLevel::Info, LogLevel::Debug})
    if (text == log_level_name(l)) return l;
  throw_usage("unknown log level '" + std::string(text) + "' (known: error, warn, info, debug)");
}

void log_line(LogLevel level, std::string_view message) {
  std::lock_guard<std::mutex> lock(g_write);
  if (g_sink) {
    g_sink(level, message);
    return;
  }
  std::fprintf(stderr, "fusor: %s: %.*s\n", log_level_name(level), static_cast<int>(message.size()),
               message.data());
}

}  // namespace fusor
