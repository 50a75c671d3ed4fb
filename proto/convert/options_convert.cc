#include "proto/convert/options_convert.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// One enum's mapping, read both ways: each core value beside its wire value. The first row is
// the default: what the wire's 0 (..._UNSPECIFIED) reads as, when `zero_is_default`, and the
// wire value of a core value no row names.
template <typename Core, typename Wire, size_t N>
struct EnumTable {
  const char* field;     // names the field in errors
  const char* expected;  // the values a client may send, for errors
  bool zero_is_default;
  std::array<std::pair<Core, Wire>, N> rows;

  absl::StatusOr<Core> FromProto(Wire wire) const {
    if (zero_is_default && static_cast<int>(wire) == 0) return rows[0].first;
    for (const auto& [core, w] : rows) {
      if (w == wire) return core;
    }
    return absl::InvalidArgumentError(
        absl::StrCat(field, " ", static_cast<int>(wire), ": expected ", expected));
  }

  Wire ToProto(Core value) const {
    for (const auto& [core, w] : rows) {
      if (core == value) return w;
    }
    return rows[0].second;
  }
};

constexpr EnumTable<OptimizerMode, v1::Mode, 3> kModes{
    "mode",
    "MODE_FAST_RUN, MODE_FAST_COMPILE or MODE_NONE",
    /*zero_is_default=*/true,
    {{{OptimizerMode::kFastRun, v1::MODE_FAST_RUN},
      {OptimizerMode::kFastCompile, v1::MODE_FAST_COMPILE},
      {OptimizerMode::kNone, v1::MODE_NONE}}}};

// Both of core's enums of this shape (OnUnusedInput, DisconnectedInputs) read the same values.
template <typename Enum>
constexpr EnumTable<Enum, v1::UnusedInput, 3> UnusedInputs(const char* field) {
  return {field,
          "UNUSED_INPUT_RAISE, _WARN or _IGNORE",
          /*zero_is_default=*/true,
          {{{Enum::kRaise, v1::UNUSED_INPUT_RAISE},
            {Enum::kWarn, v1::UNUSED_INPUT_WARN},
            {Enum::kIgnore, v1::UNUSED_INPUT_IGNORE}}}};
}
constexpr auto kOnUnusedInput = UnusedInputs<OnUnusedInput>("on_unused_input");
constexpr auto kDisconnectedInputs = UnusedInputs<DisconnectedInputs>("disconnected_inputs");

constexpr EnumTable<CheckMode, v1::Check, 3> kChecks{
    "check",
    "CHECK_NONE, _NAN_GUARD or _DEBUG",
    /*zero_is_default=*/false,  // CHECK_NONE is 0 itself
    {{{CheckMode::kNone, v1::CHECK_NONE},
      {CheckMode::kNanGuard, v1::CHECK_NAN_GUARD},
      {CheckMode::kDebug, v1::CHECK_DEBUG}}}};

}  // namespace

absl::StatusOr<OptimizerMode> FromProto(v1::Mode mode) { return kModes.FromProto(mode); }
v1::Mode ToProto(OptimizerMode mode) { return kModes.ToProto(mode); }

absl::StatusOr<OnUnusedInput> OnUnusedInputFromProto(v1::UnusedInput value) {
  return kOnUnusedInput.FromProto(value);
}
absl::StatusOr<DisconnectedInputs> DisconnectedInputsFromProto(v1::UnusedInput value) {
  return kDisconnectedInputs.FromProto(value);
}
v1::UnusedInput ToProto(OnUnusedInput value) { return kOnUnusedInput.ToProto(value); }

absl::StatusOr<CheckMode> CheckFromProto(v1::Check value) { return kChecks.FromProto(value); }
v1::Check ToProto(CheckMode value) { return kChecks.ToProto(value); }

}  // namespace kiln
