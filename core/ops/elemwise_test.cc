#include "core/ops/elemwise.h"

#include <gtest/gtest.h>

#include <cmath>

#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

std::string TypeOf(const Var& v) { return v.ok() ? v->type()->ToString() : v.status().ToString(); }

TEST(ElemwiseTypeTest, UpcastsAsAesara) {
  EXPECT_EQ(TypeOf(dmatrix() * 2.0), "TensorType(float64, (?, ?))");
  EXPECT_EQ(TypeOf(fmatrix() * 2.0), "TensorType(float32, (?, ?))");
  EXPECT_EQ(TypeOf(fmatrix() * 0.1), "TensorType(float64, (?, ?))");
  EXPECT_EQ(TypeOf(bvector() + 300), "TensorType(int16, (?,))");
  EXPECT_EQ(TypeOf(ivector() + wvector()), "TensorType(int32, (?,))");
  EXPECT_EQ(TypeOf(ivector() + fvector()), "TensorType(float64, (?,))");
  EXPECT_EQ(TypeOf(bvector() / bvector()), "TensorType(float64, (?,))");
  EXPECT_EQ(TypeOf(bvector() / fvector()), "TensorType(float32, (?,))");
  EXPECT_EQ(TypeOf(exp(bvector())), "TensorType(float32, (?,))");
  EXPECT_EQ(TypeOf(log(lvector())), "TensorType(float64, (?,))");
  EXPECT_EQ(TypeOf(pow(tensor(DType::kBool, {kUnknownDim}), tensor(DType::kBool, {kUnknownDim}))),
            "TensorType(int8, (?,))");
  EXPECT_EQ(TypeOf(-tensor(DType::kUInt8, {3})), "TensorType(uint8, (3,))");
  EXPECT_EQ(TypeOf(zmatrix() * 2.0), "TensorType(complex128, (?, ?))");
}

TEST(ElemwiseTypeTest, BroadcastsStaticShapes) {
  Var col = tensor(DType::kFloat64, {kUnknownDim, 1});
  Var row = tensor(DType::kFloat64, {1, 3});
  EXPECT_EQ(TypeOf(col + row), "TensorType(float64, (?, 3))");
  EXPECT_EQ(TypeOf(tensor(DType::kFloat64, {1, 1}) + tensor(DType::kFloat64, {1})),
            "TensorType(float64, (1, 1))");
  EXPECT_EQ(TypeOf(tensor(DType::kFloat64, {2, kUnknownDim}) + dvector()),
            "TensorType(float64, (2, ?))");
}

TEST(ElemwiseTypeTest, PadsLowerRanksWithDimShuffle) {
  Var y = dmatrix("x") + dvector("v");
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->owner()->ToString(), "Elemwise{add,no_inplace}(x, InplaceDimShuffle{x,0}.0)");
}

TEST(ElemwiseErrorTest, ShapesThatDoNotBroadcast) {
  Var y = tensor(DType::kFloat64, {2, 4}) + tensor(DType::kFloat64, {kUnknownDim, 3});
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(y.status().message(),
            "Elemwise{add,no_inplace}: input 1 has type TensorType(float64, (?, 3)) but input 0 "
            "has TensorType(float64, (2, 4)): shapes (2, 4) and (?, 3) do not broadcast");
  // A rank difference is aligned on the right, so the clash is on the last dim.
  Var z = tensor(DType::kInt32, {5}) * tensor(DType::kInt32, {2, 4});
  EXPECT_EQ(z.status().message(),
            "Elemwise{mul,no_inplace}: input 1 has type TensorType(int32, (2, 4)) but input 0 "
            "has TensorType(int32, (5,)): shapes (5,) and (2, 4) do not broadcast");
}

TEST(ElemwiseErrorTest, BadDTypesAndArity) {
  Var b = tensor(DType::kBool, {kUnknownDim}, "b");
  EXPECT_EQ((b - b).status().message(),
            "Elemwise{sub,no_inplace}: input 0 has type TensorType(bool, (?,)) and input 1 has "
            "type TensorType(bool, (?,)): sub is not defined for bool; cast to an integer first");
  EXPECT_EQ((-b).status().message(),
            "Elemwise{neg,no_inplace}: input 0 has type TensorType(bool, (?,)): neg is not "
            "defined for bool; cast to an integer first");
  absl::StatusOr<ApplyPtr> node =
      Elemwise::Make(ScalarOpKind::kTrueDiv)->MakeNode({dvector().ptr()});
  EXPECT_EQ(node.status().message(), "Elemwise{true_divide,no_inplace}: expects 2 inputs, got 1");
  node = Elemwise::Make(ScalarOpKind::kAdd)->MakeNode({dvector().ptr()});
  EXPECT_EQ(node.status().message(), "Elemwise{add,no_inplace}: expects at least 2 inputs, got 1");
}

TEST(ElemwiseErrorTest, ErrorsPropagateThroughExpressions) {
  Var bad = tensor(DType::kFloat64, {2}) + tensor(DType::kFloat64, {3});
  Var later = exp(bad * 2.0) + dvector();
  EXPECT_EQ(later.status(), bad.status());
}

TEST(ElemwiseOpTest, EqualPropsAreEqualOps) {
  OpPtr a = Elemwise::Make(ScalarOpKind::kMul);
  OpPtr b = Elemwise::Make(ScalarOpKind::kMul);
  OpPtr c = Elemwise::Make(ScalarOpKind::kAdd);
  OpPtr d = Elemwise::Make(ScalarOpKind::kMul, {{0, 0}});
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->Hash(), b->Hash());
  EXPECT_FALSE(*a == *c);
  EXPECT_FALSE(*a == *d);
  EXPECT_EQ(d->Name(), "Elemwise{Mul}[(0, 0)]");
  // An inplace Elemwise prints its scalar op's class name, as Aesara 2.9.4's inplace rewrite
  // leaves it unnamed (the names below are what Aesara printed).
  const std::vector<std::pair<ScalarOpKind, std::string>> classes = {
      {ScalarOpKind::kLt, "LT"},           {ScalarOpKind::kAnd, "AND"},
      {ScalarOpKind::kIsNan, "IsNan"},     {ScalarOpKind::kMaximum, "ScalarMaximum"},
      {ScalarOpKind::kTrueDiv, "TrueDivide"}, {ScalarOpKind::kIntDiv, "FloorDivide"},
      {ScalarOpKind::kRoundHalfToEven, "RoundHalfToEven"}, {ScalarOpKind::kLog1p, "Log1p"},
      {ScalarOpKind::kLog1mexp, "Log1mexp"}, {ScalarOpKind::kSqr, "Sqr"},
      {ScalarOpKind::kDeg2Rad, "Deg2Rad"}, {ScalarOpKind::kArccos, "ArcCos"},
      {ScalarOpKind::kArctan2, "ArcTan2"}, {ScalarOpKind::kGammaln, "GammaLn"},
      {ScalarOpKind::kJ0, "J0"},           {ScalarOpKind::kSecond, "Second"}};
  for (const auto& [kind, name] : classes) {
    EXPECT_EQ(Elemwise::Make(kind, {{0, 0}})->Name(), absl::StrCat("Elemwise{", name, "}[(0, 0)]"));
  }
  EXPECT_EQ(d->destroy_map(), (std::vector<std::pair<int, int>>{{0, 0}}));
}

TEST(ElemwisePerformTest, VariadicAddFolds) {
  Var a = dvector("a"), b = dvector("b"), c = tensor(DType::kFloat64, {1}, "c");
  Var sum = ApplyOp(Elemwise::Make(ScalarOpKind::kAdd), {a, b, c});
  ASSERT_TRUE(sum.ok());
  auto f = function({a, b, c}, {sum});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({*Tensor::Of<double>(DType::kFloat64, {2}, {1, 2}),
                   *Tensor::Of<double>(DType::kFloat64, {2}, {10, 20}),
                   *Tensor::Of<double>(DType::kFloat64, {1}, {100})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[111. 122.]");
}

TEST(ElemwisePerformTest, RuntimeErrors) {
  Var a = dvector("a"), b = dvector("b");
  auto f = function({a, b}, {a + b});
  ASSERT_TRUE(f.ok());
  auto out = (*f)({Tensor::Zeros(DType::kFloat64, {2}), Tensor::Zeros(DType::kFloat64, {3})});
  EXPECT_EQ(out.status().message(),
            "Elemwise{add,no_inplace}: input 1 has shape (3,), which does not broadcast with the "
            "other inputs on dim 0 (size 2 vs 3)");
  // Only dims of static size 1 broadcast (Aesara's rule, which the rewrites rely on).
  out = (*f)({Tensor::Zeros(DType::kFloat64, {1}), Tensor::Zeros(DType::kFloat64, {3})});
  EXPECT_EQ(out.status().message(),
            "Elemwise{add,no_inplace}: input 0 has shape (1,) and would broadcast on dim 0 to "
            "size 3, but its type TensorType(float64, (?,)) does not mark that dim broadcastable "
            "(static size 1), as Aesara requires");
  Var i = lvector("i");
  auto g = function({i}, {pow(i, i)});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)({*Tensor::Of<int64_t>(DType::kInt64, {2}, {2, -1})}).status().message(),
            "Elemwise{pow,no_inplace}: integers to negative integer powers are not allowed");
}

TEST(ElemwisePerformTest, NonContiguousInputs) {
  Var m = dmatrix("m");
  auto f = function({m}, {transpose(m) * 10.0});
  ASSERT_TRUE(f.ok());
  Tensor t = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor strided = t.View({2, 2}, {3, 2});  // columns 0 and 2
  auto out = (*f)({strided});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[[ 0. 30.]\n [20. 50.]]");
}

// Every case of tests/golden/numpy_elemwise.txt: output dtype, shape and values against NumPy.
TEST(ElemwisePerformTest, MatchesNumPy) {
  for (const auto& c : testing::ReadCases("tests/golden/numpy_elemwise.txt")) {
    ASSERT_EQ(c.size(), 10u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    const bool unary = c[4].empty();
    std::vector<Var> inputs;
    std::vector<Tensor> args;
    for (int k = 0; k < (unary ? 1 : 2); ++k) {
      args.push_back(testing::MakeTensor(c[3 * k + 1], c[3 * k + 2], c[3 * k + 3]));
      inputs.push_back(tensor(args.back().dtype(), testing::BroadcastableShape(args.back())));
    }
    Var out = ApplyOp(Elemwise::Make(*ParseScalarOpKind(c[0])), inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(DTypeName(out.dtype()), c[7]);
    auto f = function(inputs, {out});
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)(args);
    ASSERT_TRUE(result.ok()) << result.status();
    const Tensor& r = (*result)[0];
    EXPECT_EQ(DTypeName(r.dtype()), c[7]);
    EXPECT_EQ(r.shape(), testing::ParseShape(c[8]));
    const std::vector<double> expected = testing::ParseValues(c[9]);
    ASSERT_EQ(r.size(), static_cast<int64_t>(expected.size()));
    // Integers exactly; floats within a few ulps (libm and NumPy's SIMD kernels may round the
    // last bit of transcendental functions differently).
    const double ulps = r.dtype() == DType::kFloat16   ? 1e-3
                        : r.dtype() == DType::kFloat32 ? 4 * 1.2e-7
                                                       : 4 * 2.3e-16;
    for (size_t i = 0; i < expected.size(); ++i) {
      const double got = r.ElementAsDouble(i);
      if (std::isnan(expected[i])) {
        EXPECT_TRUE(std::isnan(got)) << "element " << i;
      } else if (std::isinf(expected[i]) || !IsFloat(r.dtype())) {
        EXPECT_EQ(got, expected[i]) << "element " << i;
      } else {
        EXPECT_NEAR(got, expected[i], ulps * std::fabs(expected[i])) << "element " << i;
        EXPECT_EQ(std::signbit(got), std::signbit(expected[i])) << "element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Outputs past the caches are streamed out in blocks from every thread's (unaligned) start.
TEST(ElemwisePerformTest, LargeOutputsStreamCorrectly) {
  const int64_t n = 1'000'003;  // 8 MB of float64, split at odd offsets
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<double>(i % 1000);
  Tensor x = *Tensor::FromValues<double>(DType::kFloat64, {n}, values);
  Var a = dvector("a"), b = dvector("b");
  auto f = function({a, b}, {a + b, -a, a * 2.0, cast(a, DType::kInt16) + cast(b, DType::kInt16)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({x, x});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[i];
    ASSERT_EQ((*out)[0].data<double>()[i], 2 * v) << i;
    ASSERT_EQ((*out)[1].data<double>()[i], -v) << i;
    ASSERT_EQ((*out)[2].data<double>()[i], 2 * v) << i;
    ASSERT_EQ((*out)[3].data<int16_t>()[i], static_cast<int16_t>(2 * v)) << i;
  }
}

}  // namespace
}  // namespace kiln
