#include "proto/convert/options_convert.h"

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// kRaise, kWarn or kIgnore of either of core's two enums of that shape.
template <typename Enum>
absl::StatusOr<Enum> UnusedFromProto(v1::UnusedInput value, const char* field) {
  switch (value) {
    case v1::UNUSED_INPUT_UNSPECIFIED:
    case v1::UNUSED_INPUT_RAISE:
      return Enum::kRaise;
    case v1::UNUSED_INPUT_WARN:
      return Enum::kWarn;
    case v1::UNUSED_INPUT_IGNORE:
      return Enum::kIgnore;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          field, " ", static_cast<int>(value), ": expected UNUSED_INPUT_RAISE, _WARN or _IGNORE"));
  }
}

}  // namespace

absl::StatusOr<OptimizerMode> FromProto(v1::Mode mode) {
  switch (mode) {
    case v1::MODE_UNSPECIFIED:
    case v1::MODE_FAST_RUN:
      return OptimizerMode::kFastRun;
    case v1::MODE_FAST_COMPILE:
      return OptimizerMode::kFastCompile;
    case v1::MODE_NONE:
      return OptimizerMode::kNone;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("mode ", static_cast<int>(mode),
                       ": expected MODE_FAST_RUN, MODE_FAST_COMPILE or MODE_NONE"));
  }
}

v1::Mode ToProto(OptimizerMode mode) {
  switch (mode) {
    case OptimizerMode::kFastCompile:
      return v1::MODE_FAST_COMPILE;
    case OptimizerMode::kNone:
      return v1::MODE_NONE;
    case OptimizerMode::kFastRun:
      break;
  }
  return v1::MODE_FAST_RUN;
}

absl::StatusOr<OnUnusedInput> OnUnusedInputFromProto(v1::UnusedInput value) {
  return UnusedFromProto<OnUnusedInput>(value, "on_unused_input");
}

absl::StatusOr<DisconnectedInputs> DisconnectedInputsFromProto(v1::UnusedInput value) {
  return UnusedFromProto<DisconnectedInputs>(value, "disconnected_inputs");
}

v1::UnusedInput ToProto(OnUnusedInput value) {
  switch (value) {
    case OnUnusedInput::kWarn:
      return v1::UNUSED_INPUT_WARN;
    case OnUnusedInput::kIgnore:
      return v1::UNUSED_INPUT_IGNORE;
    case OnUnusedInput::kRaise:
      break;
  }
  return v1::UNUSED_INPUT_RAISE;
}

absl::StatusOr<CheckMode> CheckFromProto(v1::Check value) {
  switch (value) {
    case v1::CHECK_NONE:
      return CheckMode::kNone;
    case v1::CHECK_NAN_GUARD:
      return CheckMode::kNanGuard;
    case v1::CHECK_DEBUG:
      return CheckMode::kDebug;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "check ", static_cast<int>(value), ": expected CHECK_NONE, _NAN_GUARD or _DEBUG"));
  }
}

v1::Check ToProto(CheckMode value) {
  switch (value) {
    case CheckMode::kNanGuard:
      return v1::CHECK_NAN_GUARD;
    case CheckMode::kDebug:
      return v1::CHECK_DEBUG;
    case CheckMode::kNone:
      break;
  }
  return v1::CHECK_NONE;
}

}  // namespace kiln
