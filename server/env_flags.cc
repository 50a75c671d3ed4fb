#include "server/env_flags.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"

namespace kiln::server {
namespace {

// The flag's variable's value; null when unset, and when empty unless `empty_is_a_value`.
const char* EnvValue(absl::string_view flag, bool empty_is_a_value = false) {
  const char* v = std::getenv(FlagEnvName(flag).c_str());
  return v != nullptr && (empty_is_a_value || *v != '\0') ? v : nullptr;
}

// A variable that does not read as its flag's type stops the server before it starts: a typo
// must not become 0 or false.
[[noreturn]] void BadValue(absl::string_view flag, const char* value, const char* expected) {
  std::fprintf(stderr, "kiln-server: %s=%s is not %s\n", FlagEnvName(flag).c_str(), value,
               expected);
  std::exit(2);
}

// "auto" is the flag's default: KILN_SHM=auto, the clients' word, leaves --shm as it is.
bool ParseBool(absl::string_view flag, const char* v, bool fallback) {
  const std::string lower = absl::AsciiStrToLower(v);
  if (lower == "auto") return fallback;
  if (lower == "on") return true;
  if (lower == "off") return false;
  bool out;
  if (!absl::SimpleAtob(lower, &out)) BadValue(flag, v, "a bool (1/0, true/false, yes/no, on/off, auto)");
  return out;
}

}  // namespace

std::string FlagEnvName(absl::string_view flag) {
  return absl::StrCat("KILN_", absl::AsciiStrToUpper(flag));
}

std::string FlagEnvHelp(absl::string_view flag, absl::string_view help) {
  return absl::StrCat(help, " (", FlagEnvName(flag), ")");
}

template <typename T>
T FlagFromEnv(absl::string_view flag, const T& fallback) {
  const char* v = EnvValue(flag);
  if (v == nullptr) return fallback;
  if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_same_v<T, bool>) {
    return ParseBool(flag, v, fallback);
  } else if constexpr (std::is_integral_v<T>) {
    T out;
    if (!absl::SimpleAtoi(v, &out)) BadValue(flag, v, "an integer");
    return out;
  } else if constexpr (std::is_same_v<T, double>) {
    double out;
    if (!absl::SimpleAtod(v, &out)) BadValue(flag, v, "a number");
    return out;
  } else if constexpr (std::is_same_v<T, absl::Duration>) {
    absl::Duration d;
    if (!absl::ParseDuration(v, &d)) BadValue(flag, v, "a duration (such as 30s, 5m or 1h)");
    return d;
  } else {
    static_assert(std::is_same_v<T, std::vector<std::string>>);
    return absl::StrSplit(v, ',', absl::SkipEmpty());
  }
}

std::string FlagFromEnvOrEmpty(absl::string_view flag, const EmptyAllowed& fallback) {
  const char* v = EnvValue(flag, /*empty_is_a_value=*/true);
  return v != nullptr ? std::string(v) : fallback.fallback;
}

template std::string FlagFromEnv(absl::string_view, const std::string&);
template int FlagFromEnv(absl::string_view, const int&);
template int64_t FlagFromEnv(absl::string_view, const int64_t&);
template bool FlagFromEnv(absl::string_view, const bool&);
template double FlagFromEnv(absl::string_view, const double&);
template absl::Duration FlagFromEnv(absl::string_view, const absl::Duration&);
template std::vector<std::string> FlagFromEnv(absl::string_view, const std::vector<std::string>&);

}  // namespace kiln::server
