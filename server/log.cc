#include "server/log.h"

#include <atomic>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/text/json.h"

namespace kiln::server {
namespace {

std::atomic<LogLevel> min_level{LogLevel::kInfo};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    default:
      return "error";
  }
}

// s as a JSON string literal (core's JSON writer escapes it).
std::string Quote(std::string_view s) { return Json().String(s).text(); }

}  // namespace

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  for (LogLevel l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError}) {
    if (text == LevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

void SetLogLevel(LogLevel level) { min_level = level; }

void Log(LogLevel level, std::string_view message,
         std::initializer_list<std::pair<std::string_view, std::string>> fields) {
  if (level < min_level.load()) return;
  std::string line = absl::StrCat(
      "{\"time\":",
      Quote(absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", absl::Now(), absl::UTCTimeZone())),
      ",\"level\":\"", LevelName(level), "\",\"msg\":", Quote(message));
  for (const auto& [key, value] : fields)
    absl::StrAppend(&line, ",", Quote(key), ":", Quote(value));
  line += "}\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace kiln::server
