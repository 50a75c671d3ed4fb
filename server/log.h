// Structured logs: one JSON object per line on stderr, with a time, a level and fields.
#ifndef KILN_SERVER_LOG_H_
#define KILN_SERVER_LOG_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::server {

enum class LogLevel { kDebug, kInfo, kWarning, kError };

// debug, info, warning or error; false for anything else.
bool ParseLogLevel(std::string_view text, LogLevel* level);
// Lines below `level` are dropped (default: info).
void SetLogLevel(LogLevel level);

// {"time":"...","level":"info","msg":"...","key":"value",...}
void Log(LogLevel level, std::string_view message,
         std::initializer_list<std::pair<std::string_view, std::string>> fields = {});

}  // namespace kiln::server

#endif  // KILN_SERVER_LOG_H_
