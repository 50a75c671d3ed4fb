#include "proto/convert/error_reason.h"

#include "absl/strings/cord.h"
#include "absl/types/optional.h"

namespace kiln {

absl::Status WithReason(absl::Status status, v1::ErrorReason reason,
                        std::initializer_list<std::pair<std::string, std::string>> metadata) {
  if (status.ok()) return status;
  v1::ErrorInfo info;
  info.set_reason(reason);
  for (const auto& [key, value] : metadata) (*info.mutable_metadata())[key] = value;
  status.SetPayload(kErrorInfoUrl, absl::Cord(info.SerializeAsString()));
  return status;
}

v1::ErrorInfo ErrorInfoOf(const absl::Status& status) {
  v1::ErrorInfo info;
  if (absl::optional<absl::Cord> payload = status.GetPayload(kErrorInfoUrl)) {
    if (!info.ParseFromString(std::string(*payload))) info.Clear();
  }
  return info;
}

v1::ErrorReason ReasonOf(const absl::Status& status) { return ErrorInfoOf(status).reason(); }

std::string StatusDetails(const absl::Status& status) {
  const v1::ErrorInfo info = ErrorInfoOf(status);
  if (info.reason() == v1::ERROR_REASON_UNSPECIFIED) return "";
  v1::RpcStatus rpc;
  rpc.set_code(static_cast<int>(status.code()));
  rpc.set_message(std::string(status.message()));
  rpc.add_details()->PackFrom(info);
  return rpc.SerializeAsString();
}

absl::Status StatusFromWire(int code, absl::string_view message, absl::string_view details) {
  absl::Status status(static_cast<absl::StatusCode>(code), message);
  v1::RpcStatus rpc;
  if (status.ok() || details.empty() ||
      !rpc.ParseFromArray(details.data(), static_cast<int>(details.size()))) {
    return status;
  }
  for (const google::protobuf::Any& any : rpc.details()) {
    v1::ErrorInfo info;
    if (any.type_url() == kErrorInfoUrl && any.UnpackTo(&info)) {
      status.SetPayload(kErrorInfoUrl, absl::Cord(info.SerializeAsString()));
    }
  }
  return status;
}

}  // namespace kiln
