// The optimizer's mode, as Aesara's (a light header: Function's options name it too).
#ifndef KILN_CORE_REWRITE_MODE_H_
#define KILN_CORE_REWRITE_MODE_H_

#include <optional>
#include <string_view>

namespace kiln {

// Every phase (FAST_RUN), the phases and rules tagged "fast_compile" (FAST_COMPILE), or nothing
// (NONE).
enum class OptimizerMode { kFastRun, kFastCompile, kNone };

// Aesara's name of a mode: "FAST_RUN", "FAST_COMPILE" or "NONE".
inline const char* OptimizerModeName(OptimizerMode mode) {
  switch (mode) {
    case OptimizerMode::kFastCompile:
      return "FAST_COMPILE";
    case OptimizerMode::kNone:
      return "NONE";
    case OptimizerMode::kFastRun:
      break;
  }
  return "FAST_RUN";
}

// The mode of that name, or nullopt.
inline std::optional<OptimizerMode> ParseOptimizerMode(std::string_view name) {
  for (OptimizerMode m :
       {OptimizerMode::kFastRun, OptimizerMode::kFastCompile, OptimizerMode::kNone}) {
    if (OptimizerModeName(m) == name) return m;
  }
  return std::nullopt;
}

}  // namespace kiln

#endif  // KILN_CORE_REWRITE_MODE_H_
