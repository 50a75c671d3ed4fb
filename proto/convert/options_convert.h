// The service's option enums (kiln.v1.Mode, kiln.v1.UnusedInput) and core's. A value this server
// does not know is INVALID_ARGUMENT naming the field.
#ifndef KILN_PROTO_CONVERT_OPTIONS_CONVERT_H_
#define KILN_PROTO_CONVERT_OPTIONS_CONVERT_H_

#include "absl/status/statusor.h"
#include "core/grad/gradient.h"
#include "core/rewrite/mode.h"
#include "core/compile/function.h"
#include "kiln/v1/options.pb.h"

namespace kiln {

// MODE_UNSPECIFIED is FAST_RUN.
absl::StatusOr<OptimizerMode> FromProto(v1::Mode mode);
v1::Mode ToProto(OptimizerMode mode);

// UNUSED_INPUT_UNSPECIFIED is raise.
absl::StatusOr<OnUnusedInput> OnUnusedInputFromProto(v1::UnusedInput value);
absl::StatusOr<DisconnectedInputs> DisconnectedInputsFromProto(v1::UnusedInput value);
v1::UnusedInput ToProto(OnUnusedInput value);
// kiln.v1.Check and core's CheckMode.
absl::StatusOr<CheckMode> CheckFromProto(v1::Check value);
v1::Check ToProto(CheckMode value);

}  // namespace kiln

#endif  // KILN_PROTO_CONVERT_OPTIONS_CONVERT_H_
