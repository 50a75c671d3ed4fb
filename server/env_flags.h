// kiln-server's flags, each of which also reads an environment variable whose name is derived
// from the flag's: KILN_ and the name in upper case (--max_call_bytes: KILN_MAX_CALL_BYTES).
// A flag is declared once, with KILN_FLAG; its variable is its default, and its help ends with
// the variable's name. A flag given on the command line wins over the variable. Every flag
// follows this rule; the one variable the server reads that is not a flag's is
// KILN_BUFFER_CACHE_BYTES, read by core's buffer allocator itself.
#ifndef KILN_SERVER_ENV_FLAGS_H_
#define KILN_SERVER_ENV_FLAGS_H_

#include <concepts>
#include <string>
#include <type_traits>

#include "absl/flags/flag.h"
#include "absl/strings/string_view.h"

namespace kiln::server {

// The variable of a flag: "max_call_bytes" -> "KILN_MAX_CALL_BYTES".
std::string FlagEnvName(absl::string_view flag);
// A flag's help followed by its variable: "... (KILN_MAX_CALL_BYTES)".
std::string FlagEnvHelp(absl::string_view flag, absl::string_view help);

// A string flag whose variable set to "" means "" rather than the fallback (KILN_CACHE_DIR=
// turns the disk tier off).
struct EmptyAllowed {
  std::string fallback;
};

// A flag's default: its variable's value when set, else `fallback`. Defined for std::string,
// int, int64_t, double, bool, absl::Duration and std::vector<std::string>. A variable unset or
// empty gives the fallback; an integer or double is read with strtoll or strtod (a bool is an
// integer, 0 false), a duration with absl::ParseDuration (unreadable: the fallback), a list as
// comma-separated items (empty ones dropped).
template <typename T>
T FlagFromEnv(absl::string_view flag, const T& fallback);
// The same for a string flag whose variable may be set to "". (A template of its own, so that a
// braced fallback such as {} never reads as an EmptyAllowed.)
std::string FlagFromEnvOrEmpty(absl::string_view flag, const EmptyAllowed& fallback);
template <typename T, std::same_as<EmptyAllowed> Fallback>
T FlagFromEnv(absl::string_view flag, const Fallback& fallback) {
  static_assert(std::is_same_v<T, std::string>, "EmptyAllowed is for string flags");
  return FlagFromEnvOrEmpty(flag, fallback);
}

}  // namespace kiln::server

// ABSL_FLAG(Type, name, ...) defaulting to the variable KILN_<NAME>, else to `fallback`.
#define KILN_FLAG(Type, name, fallback, help)                               \
  ABSL_FLAG(Type, name, ::kiln::server::FlagFromEnv<Type>(#name, fallback), \
            ::kiln::server::FlagEnvHelp(#name, help))

#endif  // KILN_SERVER_ENV_FLAGS_H_
