// The option enums both ways: every wire value to core's and back, 0 as each enum's default, and
// an unknown value an error naming the field.
#include "proto/convert/options_convert.h"

#include "gtest/gtest.h"

namespace kiln {
namespace {

TEST(OptionsConvertTest, ModesBothWays) {
  EXPECT_EQ(*FromProto(v1::MODE_UNSPECIFIED), OptimizerMode::kFastRun);
  for (auto [core, wire] : {std::pair{OptimizerMode::kFastRun, v1::MODE_FAST_RUN},
                            std::pair{OptimizerMode::kFastCompile, v1::MODE_FAST_COMPILE},
                            std::pair{OptimizerMode::kNone, v1::MODE_NONE}}) {
    EXPECT_EQ(*FromProto(wire), core);
    EXPECT_EQ(ToProto(core), wire);
  }
  absl::StatusOr<OptimizerMode> bad = FromProto(static_cast<v1::Mode>(9));
  EXPECT_EQ(bad.status(), absl::InvalidArgumentError(
                              "mode 9: expected MODE_FAST_RUN, MODE_FAST_COMPILE or MODE_NONE"));
}

TEST(OptionsConvertTest, UnusedInputsBothWays) {
  EXPECT_EQ(*OnUnusedInputFromProto(v1::UNUSED_INPUT_UNSPECIFIED), OnUnusedInput::kRaise);
  EXPECT_EQ(*DisconnectedInputsFromProto(v1::UNUSED_INPUT_UNSPECIFIED), DisconnectedInputs::kRaise);
  for (auto [core, wire] : {std::pair{OnUnusedInput::kRaise, v1::UNUSED_INPUT_RAISE},
                            std::pair{OnUnusedInput::kWarn, v1::UNUSED_INPUT_WARN},
                            std::pair{OnUnusedInput::kIgnore, v1::UNUSED_INPUT_IGNORE}}) {
    EXPECT_EQ(*OnUnusedInputFromProto(wire), core);
    EXPECT_EQ(ToProto(core), wire);
  }
  EXPECT_EQ(*DisconnectedInputsFromProto(v1::UNUSED_INPUT_RAISE), DisconnectedInputs::kRaise);
  EXPECT_EQ(*DisconnectedInputsFromProto(v1::UNUSED_INPUT_WARN), DisconnectedInputs::kWarn);
  EXPECT_EQ(*DisconnectedInputsFromProto(v1::UNUSED_INPUT_IGNORE), DisconnectedInputs::kIgnore);
  EXPECT_EQ(OnUnusedInputFromProto(static_cast<v1::UnusedInput>(7)).status(),
            absl::InvalidArgumentError(
                "on_unused_input 7: expected UNUSED_INPUT_RAISE, _WARN or _IGNORE"));
  EXPECT_EQ(DisconnectedInputsFromProto(static_cast<v1::UnusedInput>(-1)).status(),
            absl::InvalidArgumentError(
                "disconnected_inputs -1: expected UNUSED_INPUT_RAISE, _WARN or _IGNORE"));
}

TEST(OptionsConvertTest, ChecksBothWays) {
  for (auto [core, wire] : {std::pair{CheckMode::kNone, v1::CHECK_NONE},
                            std::pair{CheckMode::kNanGuard, v1::CHECK_NAN_GUARD},
                            std::pair{CheckMode::kDebug, v1::CHECK_DEBUG}}) {
    EXPECT_EQ(*CheckFromProto(wire), core);
    EXPECT_EQ(ToProto(core), wire);
  }
  EXPECT_EQ(CheckFromProto(static_cast<v1::Check>(3)).status(),
            absl::InvalidArgumentError("check 3: expected CHECK_NONE, _NAN_GUARD or _DEBUG"));
}

}  // namespace
}  // namespace kiln
