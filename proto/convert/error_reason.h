// A failed status's machine-readable reason (kiln.v1.ErrorInfo, proto/kiln/v1/errors.proto).
// Inside a process it is an absl::Status payload under kErrorInfoUrl; on the wire it is the
// status's binary details (a serialized kiln.v1.RpcStatus), written where the server turns a
// status into gRPC's or the lane's, and read back by the C++ client.
#ifndef KILN_PROTO_CONVERT_ERROR_REASON_H_
#define KILN_PROTO_CONVERT_ERROR_REASON_H_

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "kiln/v1/errors.pb.h"

namespace kiln {

// The type URL of the ErrorInfo payload, and of its Any in RpcStatus.details.
inline constexpr char kErrorInfoUrl[] = "type.googleapis.com/kiln.v1.ErrorInfo";

// `status` with `reason` and what it is about attached; an OK status stays OK.
absl::Status WithReason(absl::Status status, v1::ErrorReason reason,
                        std::initializer_list<std::pair<std::string, std::string>> metadata = {});
// The ErrorInfo attached to `status` (reason ERROR_REASON_UNSPECIFIED when there is none).
v1::ErrorInfo ErrorInfoOf(const absl::Status& status);
// The reason attached to `status`, or ERROR_REASON_UNSPECIFIED.
v1::ErrorReason ReasonOf(const absl::Status& status);
// The binary details of `status`: a serialized RpcStatus of its code, message and ErrorInfo;
// empty when it has no reason.
std::string StatusDetails(const absl::Status& status);
// The status of a code and message received with binary details (StatusDetails' bytes, or
// empty), with the ErrorInfo they hold attached.
absl::Status StatusFromWire(int code, absl::string_view message, absl::string_view details);

}  // namespace kiln

#endif  // KILN_PROTO_CONVERT_ERROR_REASON_H_
