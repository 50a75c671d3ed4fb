#include "core/text/pp.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

std::string Pp(const Var& v) {
  absl::StatusOr<std::string> text = PrettyPrint(v);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

// The gradient tutorial's example, as Aesara 2.9.4 prints it (tests/golden/pp.txt has the rest,
// checked from Python).
TEST(PpTest, PrintsTheGradientTutorialsExample) {
  Var x = dscalar("x");
  EXPECT_EQ(Pp(x + dscalar("y")), "(x + y)");
  EXPECT_EQ(Pp(grad(pow(x, 2), x)), "((fill((x ** 2), 1.0) * 2) * (x ** (2 - 1)))");
}

TEST(PpTest, PrintsOperatorsFunctionsAndIndexing) {
  Var a = dmatrix("a"), b = dvector("b");
  EXPECT_EQ(Pp(transpose(a)), "a.T");
  EXPECT_EQ(Pp(a + b), "(a + b)");
  EXPECT_EQ(Pp(-(exp(a) * 2.0)), "(-(exp(a) * 2.0))");
  EXPECT_EQ(Pp(abs(a - 1.0)), "|(a - 1.0)|");
  EXPECT_EQ(Pp(dot(a, b)), "(a \\dot b)");
  EXPECT_EQ(Pp(sum(a, {0})), "sum(a, axis=(0,))");
  EXPECT_EQ(Pp(cast(b, DType::kFloat32)), "float32(b)");
  EXPECT_EQ(Pp(subtensor(a, {0, Slice{1, 3}})), "a[0, 1:3]");
  EXPECT_EQ(Pp(subtensor(a, {Slice{}, Slice{0, std::nullopt, 2}})), "a[:, ::2]");
  EXPECT_EQ(Pp(subtensor(a, {Slice{-1}, 1})), "a[-1:, 1]");
  EXPECT_EQ(Pp(subtensor(b, {Slice{0, std::nullopt, -1}})), "b[0::-1]");
  EXPECT_EQ(Pp(set_subtensor(subtensor(a, {0}), b)), "set_subtensor(a[0], b)");
  EXPECT_EQ(Pp(make_vector({dscalar("alpha"), dscalar("y")}, DType::kFloat64)), "[\\alpha, y]");
  EXPECT_EQ(Pp(dvector()), "<TensorType(float64, (?,))>");
}

// A chain far deeper than any stack would allow prints, in text linear in its length.
TEST(PpTest, DeepChainsPrint) {
  Var v = dscalar("x");
  constexpr int kDepth = 100000;
  for (int i = 0; i < kDepth; ++i) v = exp(v);
  absl::StatusOr<std::string> text = PrettyPrint(v, {.max_chars = 10 * kDepth});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->size(), 5 * kDepth + 1);  // "exp(" and ")" per level, and "x"
}

// Shared subexpressions double the text at every level; pp stops at max_chars.
TEST(PpTest, ExponentialTextIsRefused) {
  Var v = dscalar("x");
  for (int i = 0; i < 64; ++i) v = v * v;
  absl::StatusOr<std::string> text = PrettyPrint(v);
  ASSERT_EQ(text.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(text.status().message(),
            "pp: the expression's text exceeds 1048576 characters (a shared subexpression is "
            "written out at each of its uses)");
  EXPECT_EQ(PrettyPrint(Var(absl::InvalidArgumentError("bad"))).status().message(), "bad");
}

}  // namespace
}  // namespace kiln
