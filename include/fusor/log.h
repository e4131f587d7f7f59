// Where fusor's log messages go. fusor never writes to a host's stdout or stderr except through
// this handler: errors are exceptions (error.h) whose text carries the diagnostics; warnings (a
// provider whose kernels are not built, rule-file warnings) and, at higher verbosity, timings are
// log messages. Without a handler they go to stderr as "fusor: warn: text".
#pragma once
#include <functional>
#include <string>

namespace fusor {

enum class LogSeverity { Error, Warning, Info, Debug };

// Called with each message (one thread at a time). Process-wide; an empty handler restores the
// default (stderr).
using LogHandler = std::function<void(LogSeverity severity, const std::string& message)>;
void set_log_handler(LogHandler handler);

// Messages less severe than `max` are dropped (default Warning).
void set_log_severity(LogSeverity max);

}  // namespace fusor
