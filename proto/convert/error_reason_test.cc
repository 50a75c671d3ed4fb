#include "proto/convert/error_reason.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(ErrorReasonTest, AttachedReasonsSurviveTheWire) {
  const absl::Status s = WithReason(absl::ResourceExhaustedError("over its quota"),
                                    v1::QUOTA_EXCEEDED, {{"quota", "executions"}});
  EXPECT_EQ(ReasonOf(s), v1::QUOTA_EXCEEDED);
  EXPECT_EQ(s.message(), "over its quota");
  const std::string details = StatusDetails(s);
  v1::RpcStatus rpc;  // google.rpc.Status's form, as any gRPC tool reads it
  ASSERT_TRUE(rpc.ParseFromString(details));
  EXPECT_EQ(rpc.code(), static_cast<int>(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(rpc.message(), "over its quota");
  ASSERT_EQ(rpc.details_size(), 1);
  EXPECT_EQ(rpc.details(0).type_url(), kErrorInfoUrl);

  const absl::Status back = StatusFromWire(rpc.code(), "over its quota", details);
  EXPECT_EQ(back.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(back.message(), "over its quota");
  const v1::ErrorInfo info = ErrorInfoOf(back);
  EXPECT_EQ(info.reason(), v1::QUOTA_EXCEEDED);
  EXPECT_EQ(info.metadata().at("quota"), "executions");
}

TEST(ErrorReasonTest, NoReasonMeansNoDetails) {
  EXPECT_EQ(StatusDetails(absl::NotFoundError("no")), "");
  EXPECT_EQ(ReasonOf(absl::NotFoundError("no")), v1::ERROR_REASON_UNSPECIFIED);
  EXPECT_TRUE(WithReason(absl::OkStatus(), v1::FUNCTION_NOT_FOUND).ok());
  EXPECT_EQ(ReasonOf(StatusFromWire(5, "no", "")), v1::ERROR_REASON_UNSPECIFIED);
  EXPECT_EQ(ReasonOf(StatusFromWire(5, "no", "not a status")), v1::ERROR_REASON_UNSPECIFIED);
  EXPECT_EQ(StatusFromWire(5, "no", "not a status").code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln
