// The function id: invariant to names, build order and duplicated subexpressions; sensitive to
// ops, constants (by bytes), types, input and output positions and the salt.
#include "core/graph/canonical.h"

#include "absl/strings/match.h"
#include "core/kiln.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

std::string Id(const std::vector<Var>& in, const std::vector<Var>& out,
               std::string_view salt = "") {
  absl::StatusOr<CanonicalGraph> g = Canonicalize(in, out, salt);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? g->id : "";
}

TEST(CanonicalTest, Sha256MatchesTheStandardVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(CanonicalTest, InvariantToNamesOrderAndDuplicates) {
  Var a = dvector("a"), b = dvector("b"), c = dvector("c"), d = dvector("d");
  // (a + b) * (c + d), built in two orders, with other names.
  Var left = a + b;
  Var right = c + d;
  const std::string id1 = Id({a, b, c, d}, {left * right});
  Var p = dvector("p"), q = dvector("q"), r = dvector("r"), s = dvector("s");
  Var second = r + s;
  Var first = p + q;
  EXPECT_EQ(Id({p, q, r, s}, {first * second}), id1);
  // exp(a) computed twice or once.
  EXPECT_EQ(Id({a}, {exp(a) + exp(a)}), Id({a}, {[&] {
                                             Var e = exp(a);
                                             return e + e;
                                           }()}));
}

TEST(CanonicalTest, SensitiveToWhatTheFunctionComputes) {
  Var a = dvector("a"), b = dvector("b");
  const std::string base = Id({a, b}, {a * 2.0 + b});
  EXPECT_NE(Id({a, b}, {a * 3.0 + b}), base);                  // a constant
  EXPECT_NE(Id({a, b}, {a * 2.0 - b}), base);                  // an op
  EXPECT_NE(Id({b, a}, {a * 2.0 + b}), base);                  // input positions
  EXPECT_NE(Id({a, b}, {a * 2.0 + b}, "FAST_COMPILE"), base);  // the salt
  Var f = fvector("a");
  EXPECT_NE(Id({f, b}, {f * 2.0 + b}), base);                              // a type
  EXPECT_NE(Id({a}, {a * constant(0.0)}), Id({a}, {a * constant(-0.0)}));  // -0.0 by bytes
  EXPECT_NE(Id({a, b}, {a, b}), Id({a, b}, {b, a}));                       // output positions
  EXPECT_EQ(Canonicalize({a}, {a + b}).status().message(),
            "MissingInputError: b is needed but is not among the inputs");
}

// A constant of more than 64 bytes is in the form by its bytes' SHA-256 (a model's 2 MB matrix is
// not 4 MB of hex): one byte changed changes the id; a small constant stays in hex.
TEST(CanonicalTest, LargeConstantsByTheirDigest) {
  Var a = dvector("a");
  std::vector<double> values(9, 1.5);  // 72 bytes
  auto big = [&] { return constant(*Tensor::FromValues<double>(DType::kFloat64, {9}, values)); };
  const absl::StatusOr<CanonicalGraph> g = Canonicalize({a}, {a + big()});
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string bytes(reinterpret_cast<const char*>(values.data()), 72);
  EXPECT_TRUE(absl::StrContains(g->form, "sha256:" + Sha256Hex(bytes))) << g->form;
  EXPECT_EQ(Id({a}, {a + big()}), g->id);
  values[8] = -1.5;
  EXPECT_NE(Id({a}, {a + big()}), g->id);
  values.resize(8);  // 64 bytes: by their hex
  const absl::StatusOr<CanonicalGraph> small =
      Canonicalize({a}, {a + constant(*Tensor::FromValues<double>(DType::kFloat64, {8}, values))});
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE(absl::StrContains(small->form, "sha256:"));
  EXPECT_TRUE(absl::StrContains(small->form, "000000000000f83f")) << small->form;  // 1.5
}

}  // namespace
}  // namespace kiln
