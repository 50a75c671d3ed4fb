#include "server/log.h"

#include <atomic>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

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

// s as a JSON string literal.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

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
