// Every scalar op through Elemwise against NumPy and SciPy on the edge cases of each dtype it
// takes (tests/golden/numpy_scalar_ops.txt, written by tests/golden/gen_numpy_cases.py).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "absl/strings/str_join.h"
#include "core/kiln.h"
#include "core/ops/sleef_kernels.h"
#include "core/ops/special_fns.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// Relative tolerance by output dtype; special functions get a little more in float64.
double Tolerance(DType dtype, const std::string& op) {
  if (dtype == DType::kFloat16) return 1e-3;
  if (dtype == DType::kFloat32 || dtype == DType::kComplex64) return 2e-6;
  const bool special = op == "erfcx" || op == "erfinv" || op == "erfcinv" || op == "gamma" ||
                       op == "gammaln" || op == "psi" || op == "softplus" || op == "tan";
  // SLEEF's 3.5-ULP variants (log, sin, cos, arc functions, tanh): within 4 ULP.
  const bool u35 = op == "log" || op == "sin" || op == "cos" || op == "arcsin" || op == "arccos" ||
                   op == "arctan" || op == "tanh";
  return special ? 1e-13 : u35 ? 9e-16 : 4e-16;
}

Var Build(const std::string& op, const std::vector<Var>& in) {
  std::optional<ScalarOpKind> kind = ParseScalarOpKind(op);
  if (!kind) return Var(absl::NotFoundError("unknown op " + op));
  return ApplyOp(Elemwise::Make(*kind), in);
}

TEST(ScalarOpsTest, MatchNumPyAndSciPy) {
  std::cout << "SLEEF instruction set: " << sleef::IsaName() << "\n";
  std::set<std::string> ops_seen;
  for (const auto& c : testing::ReadCases("tests/golden/numpy_scalar_ops.txt")) {
    ASSERT_EQ(c.size(), 13u);
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    std::vector<Var> inputs;
    std::vector<Tensor> args;
    for (int k = 0; k < 3 && !c[3 * k + 1].empty(); ++k) {
      args.push_back(testing::MakeTensor(c[3 * k + 1], c[3 * k + 2], c[3 * k + 3]));
      inputs.push_back(tensor(args.back().dtype(), testing::BroadcastableShape(args.back())));
    }
    Var out = Build(c[0], inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(DTypeName(out.dtype()), c[10]);
    auto f = function(inputs, {out});
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)(args);
    ASSERT_TRUE(result.ok()) << result.status();
    const Tensor& r = (*result)[0];
    EXPECT_EQ(DTypeName(r.dtype()), c[10]);
    EXPECT_EQ(r.shape(), testing::ParseShape(c[11]));
    const Tensor expected_tensor = testing::MakeTensor(c[10], c[11], c[12]);
    const std::vector<double> got = testing::Elements(r);
    const std::vector<double> expected = testing::Elements(expected_tensor);
    ASSERT_EQ(got.size(), expected.size());
    const double rtol = Tolerance(r.dtype(), c[0]);
    for (size_t i = 0; i < expected.size(); ++i) {
      const double e = expected[i], g = got[i];
      if (std::isnan(e)) {
        EXPECT_TRUE(std::isnan(g)) << "element " << i << " is " << g;
      } else if (std::isinf(e) || !(IsFloat(r.dtype()) || IsComplex(r.dtype()))) {
        EXPECT_EQ(g, e) << "element " << i;
      } else {
        EXPECT_NEAR(g, e, rtol * std::fabs(e) + 1e-300) << "element " << i;
        // SciPy's erfinv(-0.0) and erfcinv(1.0) are +0.0 and -0.0; Kiln keeps erfinv odd.
        if (e == 0 && c[0] != "erfinv" && c[0] != "erfcinv") {
          EXPECT_EQ(std::signbit(g), std::signbit(e)) << "sign of zero, element " << i;
        }
      }
    }
    ops_seen.insert(c[0]);
  }
  // Every scalar op but cast (ElemwiseCastTest), composite (composite_test) and the special
  // functions (special_test, whose cases take up to five inputs) has reference cases.
  int special = 0;
  for (int i = 0; i < NumScalarOps(); ++i) special += IsSpecialFn(static_cast<ScalarOpKind>(i));
  EXPECT_EQ(static_cast<int>(ops_seen.size()), NumScalarOps() - 2 - special);
}

TEST(ElemwiseCastTest, CastsAsNumPyAstype) {
  Var x = dvector("x");
  Var y = cast(x, DType::kInt16);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ(y->owner()->op().Name(), "Elemwise{Cast{int16}}");
  EXPECT_EQ(cast(x, DType::kFloat64).ptr(), x.ptr());
  auto f = function({x}, {y, cast(x, DType::kBool), cast(x, DType::kComplex64)});
  ASSERT_TRUE(f.ok());
  auto out = (*f)({*Tensor::Of<double>(DType::kFloat64, {4}, {-1.7, 0.0, 2.9, 300.0})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].ToString(), "[ -1   0   2 300]");
  EXPECT_EQ((*out)[1].ToString(), "[ True False  True  True]");
  EXPECT_EQ((*out)[2].dtype(), DType::kComplex64);
  EXPECT_EQ(cast(zvector("z"), DType::kFloat64).status().message(),
            "Elemwise{Cast{float64}}: input 0 has type TensorType(complex128, (?,)): Casting "
            "from complex to real is ambiguous: consider real(), imag(), angle() or abs()");
}

// Cast from float64 to every dtype, as numpy.astype: truncation toward zero, non-zero -> True.
TEST(ElemwiseCastTest, ToEveryDType) {
  Var x = dvector("x");
  const Tensor values = *Tensor::Of<double>(DType::kFloat64, {4}, {0.0, 1.0, 2.75, -0.5});
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType d = static_cast<DType>(i);
    SCOPED_TRACE(DTypeName(d));
    Var y = cast(x, d);
    ASSERT_TRUE(y.ok()) << y.status();
    auto f = function({x}, {y});
    ASSERT_TRUE(f.ok()) << f.status();
    auto out = (*f)({values});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& r = (*out)[0];
    EXPECT_EQ(r.dtype(), d);
    std::vector<double> expected = {0.0, 1.0, 2.75, -0.5};
    if (IsBool(d)) expected = {0, 1, 1, 1};
    if (IsSignedInt(d)) expected = {0, 1, 2, 0};
    if (IsUnsignedInt(d)) expected = {0, 1, 2, 0};  // -0.5 truncates to 0
    for (int k = 0; k < 4; ++k) EXPECT_EQ(r.ElementAsDouble(k), expected[k]) << "element " << k;
  }
  EXPECT_EQ(where(bvector(), dvector(), dvector())->owner()->op().Name(),
            "Elemwise{switch,no_inplace}");
}

TEST(ScalarOpsErrorTest, DTypesAnOpDoesNotTake) {
  EXPECT_EQ(sin(zvector("z")).status().message(),
            "Elemwise{sin,no_inplace}: input 0 has type TensorType(complex128, (?,)): sin is "
            "not defined for complex128");
  EXPECT_EQ(round_half_to_even(ivector("i")).status().message(),
            "Elemwise{round_half_to_even,no_inplace}: input 0 has type TensorType(int32, (?,)): "
            "round_half_to_even is not defined for int32; only floats");
  EXPECT_EQ((dvector("a") & dvector("b")).status().message(),
            "Elemwise{and_,no_inplace}: input 0 has type TensorType(float64, (?,)) and input 1 "
            "has type TensorType(float64, (?,)): and_ is not defined for float64");
  EXPECT_EQ((bvector("a") | tensor(DType::kBool, {kUnknownDim})).status().message(),
            "Elemwise{or_,no_inplace}: input 0 has type TensorType(int8, (?,)) and input 1 has "
            "type TensorType(bool, (?,)): or_ is not defined for bool mixed with integers; cast "
            "first");
  EXPECT_EQ(maximum(zvector("a"), zvector("b")).status().message(),
            "Elemwise{scalar_maximum,no_inplace}: input 0 has type TensorType(complex128, (?,)) "
            "and input 1 has type TensorType(complex128, (?,)): maximum is not defined for "
            "complex128");
}

TEST(ScalarOpsErrorTest, IntegerDivisionByZero) {
  Var a = ivector("a"), b = ivector("b");
  auto f = function({a, b}, {int_div(a, b)});
  auto g = function({a, b}, {a % b});
  ASSERT_TRUE(f.ok() && g.ok());
  Tensor x = *Tensor::Of<int64_t>(DType::kInt32, {2}, {1, 2});
  Tensor zero = *Tensor::Of<int64_t>(DType::kInt32, {2}, {1, 0});
  EXPECT_EQ((*f)({x, zero}).status().message(),
            "Elemwise{floor_divide,no_inplace}: integer division by zero");
  EXPECT_EQ((*g)({x, zero}).status().message(), "Elemwise{mod,no_inplace}: integer modulo by zero");
}

TEST(ScalarOpsTest, NamesMatchAesara) {
  EXPECT_EQ(switch_(bvector(), dvector(), dvector())->owner()->op().Name(),
            "Elemwise{switch,no_inplace}");
  EXPECT_EQ(second(dvector(), dvector())->owner()->op().Name(), "Elemwise{second,no_inplace}");
  EXPECT_EQ(identity(dvector())->owner()->op().Name(), "Elemwise{identity}");
  EXPECT_EQ(minimum(dvector(), 1.0)->owner()->op().Name(), "Elemwise{scalar_minimum,no_inplace}");
  EXPECT_EQ((dvector() < 1.0)->type()->ToString(), "TensorType(bool, (?,))");
  EXPECT_EQ(clip(ivector(), 0, 300)->type()->ToString(), "TensorType(int32, (?,))");
  EXPECT_EQ(angle(cvector())->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(abs(cvector())->type()->ToString(), "TensorType(float32, (?,))");
  EXPECT_EQ(ceil(bvector())->type()->ToString(), "TensorType(float32, (?,))");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The algebra column of the scalar op table is a claim the rewrites act on: every op it calls
// commutative, associative or with an identity element is checked so on values where float
// arithmetic is exact (small integers, and NaN for the comparisons' sake).
TEST(ScalarOpsTest, AlgebraColumnHolds) {
  int checked = 0;
  for (int k = 0; k < NumScalarOps(); ++k) {
    const auto kind = static_cast<ScalarOpKind>(k);
    const ScalarAlgebra& algebra = ScalarOpAlgebra(kind);
    if (!algebra.commutative && !algebra.associative && !algebra.identity) continue;
    SCOPED_TRACE(ScalarOpName(kind));
    const bool bitwise =
        kind == ScalarOpKind::kAnd || kind == ScalarOpKind::kOr || kind == ScalarOpKind::kXor;
    const DType dtype = bitwise ? DType::kInt64 : DType::kFloat64;
    const Var a = tensor(dtype, {std::nullopt}, "a"), b = tensor(dtype, {std::nullopt}, "b"),
              c = tensor(dtype, {std::nullopt}, "c");
    auto f = [&](const Var& x, const Var& y) { return ApplyOp(Elemwise::Make(kind), {x, y}); };
    std::vector<Var> outputs = {f(a, b), f(b, a), f(f(a, b), c), f(a, f(b, c))};
    if (algebra.identity) outputs.push_back(f(a, scalar_constant(*algebra.identity, dtype)));
    auto fn = function({a, b, c}, outputs, {.mode = OptimizerMode::kNone});
    ASSERT_TRUE(fn.ok()) << fn.status();
    const std::vector<double> av = {-3, 0, 5, 7, 2, -1}, bv = {4, -2, 5, 1, 0, 6},
                              cv = {1, 3, -5, 2, 9, -8};
    auto values = [&](const std::vector<double>& v) {
      return *Tensor::FromValues<double>(dtype, {static_cast<int64_t>(v.size())}, v);
    };
    auto r = (*fn)({values(av), values(bv), values(cv)});
    ASSERT_TRUE(r.ok()) << r.status();
    if (algebra.commutative) {
      EXPECT_TRUE((*r)[0].BitwiseEquals((*r)[1]));
    }
    if (algebra.associative) {
      EXPECT_TRUE((*r)[2].BitwiseEquals((*r)[3]));
    }
    if (algebra.identity) {
      EXPECT_TRUE(
          (*r)[4].AsType(DType::kFloat64).BitwiseEquals(values(av).AsType(DType::kFloat64)));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 9);  // eq neq and_ or_ xor maximum minimum add mul
}

}  // namespace
}  // namespace kiln
