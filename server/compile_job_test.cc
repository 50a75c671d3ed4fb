// The request memo's key: the SHA-256 of the request's bytes in its tenant's scope, hashed as
// it is serialized (no copy of the bytes), across the stream's buffer whatever their size.
#include "server/compile_job.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "core/graph/canonical.h"
#include "core/kiln.h"

namespace kiln::server {
namespace {

v1::CompileRequest RequestWithConstantOf(int64_t n) {
  Var x = dvector("x");
  Tensor values = Tensor::Empty(DType::kFloat64, {n});
  for (int64_t i = 0; i < n; ++i) values.data<double>()[i] = 0.5 * static_cast<double>(i);
  v1::CompileRequest request;
  *request.mutable_graph() = *GraphToProto({x}, {x + constant(std::move(values))});
  return request;
}

TEST(RequestKeyTest, IsTheSha256OfTheRequestsBytesInItsScope) {
  // Below, at and well past the 64 KB buffer: 8 bytes per element.
  for (int64_t n : {1, 8192, 8193, 300000}) {
    const v1::CompileRequest request = RequestWithConstantOf(n);
    const std::string bytes = request.SerializeAsString();
    EXPECT_EQ(RequestKey(request, std::nullopt), Sha256Hex(bytes)) << n;
    EXPECT_EQ(RequestKey(request, "acme"), Sha256Hex(absl::StrCat("tenant acme\n", bytes))) << n;
  }
}

TEST(RequestKeyTest, TellsTenantsAndRequestsApart) {
  const v1::CompileRequest a = RequestWithConstantOf(10), b = RequestWithConstantOf(11);
  EXPECT_NE(RequestKey(a, std::nullopt), RequestKey(b, std::nullopt));
  EXPECT_NE(RequestKey(a, "acme"), RequestKey(a, "globex"));
  EXPECT_NE(RequestKey(a, "acme"), RequestKey(a, std::nullopt));
}

}  // namespace
}  // namespace kiln::server
