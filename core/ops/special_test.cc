// The special-function scalar ops (special_fns.h): values against SciPy and Aesara
// (tests/golden/special_cases.txt, from tests/golden/gen_special_cases.py), dtype rules and
// names as Aesara's, gradients by finite differences, fusion, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/kiln.h"
#include "core/ops/special_fns.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

double Parse(const std::string& s) {
  double v = 0;
  EXPECT_TRUE(absl::SimpleAtod(s, &v)) << s;
  return v;
}

Tensor Vec(DType dtype, const std::vector<double>& v) {
  return Tensor::FromValues<double>(DType::kFloat64, {static_cast<int64_t>(v.size())}, v)
      ->AsType(dtype);
}

// Relative error of got against expected, 0 when both are the same NaN or infinity.
double RelErr(double got, double expected) {
  if (std::isnan(expected) || std::isnan(got))
    return std::isnan(expected) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(expected) || std::isinf(got)) return got == expected ? 0 : INFINITY;
  if (expected == 0) return std::fabs(got) < 1e-300 ? 0 : std::fabs(got);
  return std::fabs(got - expected) / std::fabs(expected);
}

// One (op, dtype)'s cases of the golden file, evaluated as one Elemwise over vectors.
struct Group {
  std::vector<std::vector<double>> args;  // args[input][case]
  std::vector<double> expected, truth;    // truth: mpmath's, NaN where the file has none
};

// |got - truth| in units in the last place of truth (float64).
double Ulps(double got, double truth) {
  return std::fabs(got - truth) / (std::nextafter(std::fabs(truth), INFINITY) - std::fabs(truth));
}

TEST(SpecialTest, MatchSciPyAndAesara) {
  std::map<std::pair<std::string, std::string>, Group> groups;
  for (const auto& c : testing::ReadCases("tests/golden/special_cases.txt")) {
    ASSERT_GE(c.size(), 4u);
    Group& g = groups[{c[0], c[1]}];
    const std::vector<std::string> args = absl::StrSplit(c[2], ',');
    g.args.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i) g.args[i].push_back(Parse(args[i]));
    g.expected.push_back(Parse(c[3]));
    g.truth.push_back(c.size() > 4 ? Parse(c[4]) : NAN);
  }
  std::set<std::string> seen;
  for (const auto& [key, g] : groups) {
    const auto& [op, dtype_name] = key;
    SCOPED_TRACE(op + " " + dtype_name);
    const DType dtype = *ParseDType(dtype_name);
    std::vector<Var> inputs;
    std::vector<Tensor> values;
    for (const auto& a : g.args) {
      inputs.push_back(tensor(dtype, {std::nullopt}));
      values.push_back(Vec(dtype, a));
    }
    const std::optional<ScalarOpKind> kind = ParseScalarOpKind(op);
    ASSERT_TRUE(kind.has_value());
    ASSERT_TRUE(IsSpecialFn(*kind));
    const Var out = ApplyOp(Elemwise::Make(*kind), inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out.dtype(), dtype);
    auto f = function(inputs, {out});
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)(values);
    ASSERT_TRUE(result.ok()) << result.status();
    const std::vector<double> got = testing::Elements((*result)[0]);
    // float64: 1e-12 relative (SciPy's Cephes and Boost.Math agree to a few 1e-15); float32:
    // both round the same double result, so within one float32 ulp.
    const double rtol = dtype == DType::kFloat32 ? 1.2e-7 : 1e-12;
    double worst = 0, ulps = 0, scipy_ulps = 0;
    bool has_truth = false;
    for (size_t i = 0; i < got.size(); ++i) {
      const double err = RelErr(got[i], g.expected[i]);
      worst = std::max(worst, err);
      // Where Aesara's own series is the reference (the _der ops), Kiln may differ from it only
      // by being closer to mpmath.
      const bool closer = !std::isnan(g.truth[i]) && op.ends_with("_der") &&
                          std::fabs(got[i] - g.truth[i]) < std::fabs(g.expected[i] - g.truth[i]);
      if (!closer) {
        EXPECT_LE(err, rtol) << "case " << i << ": got " << got[i] << ", expected "
                             << g.expected[i];
      }
      if (!std::isnan(g.truth[i])) {
        has_truth = true;
        ulps = std::max(ulps, Ulps(got[i], g.truth[i]));
        scipy_ulps = std::max(scipy_ulps, Ulps(g.expected[i], g.truth[i]));
      }
    }
    // The accuracy table: against the reference (SciPy, or Aesara's own series for the _der
    // ops) and, where the file has it, in ulps of mpmath's 30-digit value (Kiln's and the
    // reference's).
    std::cout << "ACCURACY " << op << " " << dtype_name << " max_rel_err_vs_reference=" << worst;
    if (has_truth) std::cout << " max_ulps_vs_mpmath=" << ulps << " reference_ulps=" << scipy_ulps;
    std::cout << "\n";
    seen.insert(op);
  }
  // Every special function has cases.
  for (int i = 0; i < NumScalarOps(); ++i) {
    const auto k = static_cast<ScalarOpKind>(i);
    if (IsSpecialFn(k)) EXPECT_TRUE(seen.contains(ScalarOpName(k))) << ScalarOpName(k);
  }
}

TEST(SpecialTest, TypesAndNamesAsAesara) {
  // upgrade_to_float: int8/int16 -> float32, int32/int64 -> float64, then promotion.
  EXPECT_EQ(gammainc(bscalar("k"), bscalar("x")).dtype(), DType::kFloat32);
  EXPECT_EQ(gammainc(fscalar("k"), iscalar("x")).dtype(), DType::kFloat64);
  EXPECT_EQ(tri_gamma(wvector("x")).dtype(), DType::kFloat32);
  EXPECT_EQ(jv(lscalar("v"), fvector("x")).dtype(), DType::kFloat64);
  EXPECT_EQ(betainc(fscalar("a"), fscalar("b"), fvector("x")).dtype(), DType::kFloat32);
  EXPECT_EQ(hyp2f1(dscalar(), dscalar(), dscalar(), fmatrix()).type().ToString(),
            "TensorType(float64, (?, ?))");
  const Var b = betainc(dscalar("a"), dscalar("b"), dvector("x"));
  EXPECT_EQ(b->owner()->op().Name(), "Elemwise{betainc,no_inplace}");
  EXPECT_EQ(gammaincc(dscalar(), dscalar())->owner()->op().Name(),
            "Elemwise{gammaincc,no_inplace}");
  EXPECT_EQ(tri_gamma(dscalar())->owner()->op().Name(), "Elemwise{tri_gamma,no_inplace}");
  EXPECT_EQ(hyp2f1_der(dscalar(), dscalar(), dscalar(), dscalar(), constant(int64_t{0}))
                ->owner()
                ->op()
                .Name(),
            "Elemwise{hyp2f1_der,no_inplace}");
  EXPECT_EQ(ScalarOpArity(ScalarOpKind::kHyp2F1Der), 5);
  EXPECT_EQ(ParseScalarOpKind("gammainccinv"), ScalarOpKind::kGammaIncCInv);
  // The functions PyTensor writes from other ops.
  EXPECT_EQ(betaln(dscalar(), dscalar()).dtype(), DType::kFloat64);
  EXPECT_EQ(kv(dscalar(), dscalar())->owner()->op().Name(), "Elemwise{mul,no_inplace}");
}

// A float64 vector.
Tensor Pt(std::vector<double> v) {
  return *Tensor::FromValues<double>(DType::kFloat64, {static_cast<int64_t>(v.size())}, v);
}

TEST(SpecialTest, Errors) {
  const Var z = zvector("z");
  const Var g = gammainc(dvector("k"), z);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("gammainc"), std::string::npos) << g.status();
  EXPECT_NE(g.status().message().find("complex128"), std::string::npos) << g.status();
  const Var wrong = ApplyOp(Elemwise::Make(ScalarOpKind::kBetaInc), {dscalar(), dscalar()});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().message(), "Elemwise{betainc,no_inplace}: expects 3 inputs, got 2");
  // hyp2f1_der's wrt must be 0, 1 or 2, as Aesara's ValueError.
  const Var a = dvector("a"), w = dvector("w");
  const Var d = hyp2f1_der(a, a, a + 1.0, a * 0.5, w);
  auto f = function({a, w}, {d});
  ASSERT_TRUE(f.ok()) << f.status();
  auto ok = (*f)({Pt({0.5}), Pt({2.0})});
  ASSERT_TRUE(ok.ok()) << ok.status();
  auto bad = (*f)({Pt({0.5}), Pt({3.0})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("hyp2f1_der's input 4 (wrt) must be 0, 1 or 2; got 3"),
            std::string::npos)
      << bad.status();
}

void ExpectGradOk(const std::string& what, const std::function<Var(const std::vector<Var>&)>& fn,
                  const std::vector<Tensor>& pt, double tol = 1e-4) {
  VerifyGradOptions options;
  options.abs_tol = tol;
  options.rel_tol = tol;
  const absl::Status s = verify_grad(fn, pt, options);
  EXPECT_TRUE(s.ok()) << what << ": " << s;
}

TEST(SpecialTest, GradientsByFiniteDifferences) {
  using V = std::vector<Var>;
  // gammainc / gammaincc wrt k (gammainc_der, gammaincc_der: Aesara's series) and x, across the
  // series/asymptotic switch points and near x = 0.
  const Tensor k = Pt({0.5, 1.0, 2.5, 3.0, 10.0, 25.0, 0.9});
  const Tensor x = Pt({0.5, 1.0, 1.3, 10.0, 3.0, 30.0, 0.01});
  ExpectGradOk(
      "gammainc", [](const V& in) { return gammainc(in[0], in[1]); }, {k, x}, 1e-3);
  ExpectGradOk(
      "gammaincc", [](const V& in) { return gammaincc(in[0], in[1]); }, {k, x}, 1e-3);
  ExpectGradOk("gammaincinv wrt p",
               [&](const V& in) {
                 return gammaincinv(constant(Pt({0.5, 2.0, 7.0})), in[0]);
               },
               {Pt({0.3, 0.6, 0.95})});
  ExpectGradOk("gammainccinv wrt q",
               [&](const V& in) {
                 return gammainccinv(constant(Pt({0.5, 2.0, 7.0})), in[0]);
               },
               {Pt({0.3, 0.6, 0.95})});
  // betainc wrt a, b (betainc_der: Boik and Robison-Cox) and x, on both sides of a / (a + b).
  ExpectGradOk(
      "betainc", [](const V& in) { return betainc(in[0], in[1], in[2]); },
      {Pt({2.0, 0.5, 5.0, 10.0, 1.5}), Pt({3.0, 0.5, 1.5, 20.0, 7.0}),
       Pt({0.3, 0.1, 0.9, 0.4, 0.05})},
      1e-3);
  ExpectGradOk(
      "betaincinv wrt y",
      [&](const V& in) {
        return betaincinv(constant(Pt({2.0, 0.5, 5.0})), constant(Pt({3.0, 0.7, 1.5})), in[0]);
      },
      {Pt({0.2, 0.5, 0.9})});
  ExpectGradOk("owens_t", [](const V& in) { return owens_t(in[0], in[1]); },
               {Pt({0.0, 1.0, -1.0, 0.5, 3.0}), Pt({1.0, 2.0, -2.0, 0.3, 0.1})});
  ExpectGradOk("tri_gamma", [](const V& in) { return tri_gamma(in[0]); },
               {Pt({0.5, 1.0, 3.5, 20.0, -1.5})});
  ExpectGradOk("psi (tri_gamma)", [](const V& in) { return psi(in[0]); },
               {Pt({0.5, 1.0, 3.5, -1.5})});
  ExpectGradOk("polygamma wrt x",
               [](const V& in) {
                 return polygamma(constant(Pt({1.0, 2.0, 3.0})), in[0]);
               },
               {Pt({0.7, 2.5, 6.0})});
  // Bessel functions wrt x (their order has no gradient, as in Aesara and PyTensor).
  const Tensor v = Pt({0.0, 1.0, 0.5, 2.0, 3.7});
  const Tensor bx = Pt({1.0, 2.5, 3.0, 0.7, 10.0});
  auto wrt_x = [&](Var (*f)(const Var&, const Var&)) {
    return [f, &v](const V& in) { return f(constant(v), in[0]); };
  };
  ExpectGradOk("jv", wrt_x(jv), {bx});
  ExpectGradOk("iv", wrt_x(iv), {bx});
  ExpectGradOk("ive", wrt_x(ive), {bx});
  ExpectGradOk("ive x<0",
               [](const V& in) {
                 return ive(constant(Pt({0.0, 1.0, 2.0})), in[0]);
               },
               {Pt({-1.0, -2.5, -0.3})});
  ExpectGradOk("kve", wrt_x(kve), {bx});
  ExpectGradOk("kv", wrt_x(kv), {bx});
  // hyp2f1 wrt a, b, c (hyp2f1_der: Stan's series) and z, for z on both sides of 0.
  ExpectGradOk(
      "hyp2f1", [](const V& in) { return hyp2f1(in[0], in[1], in[2], in[3]); },
      {Pt({1.0, 0.5, 1.5, 0.3}), Pt({1.0, 0.5, 2.5, 0.7}), Pt({2.0, 1.0, 4.0, 2.2}),
       Pt({0.5, 0.3, -0.7, 0.8})},
      1e-3);
  // Functions built from other ops.
  ExpectGradOk("betaln", [](const V& in) { return betaln(in[0], in[1]); },
               {Pt({0.5, 3.0}), Pt({2.0, 7.5})});
  ExpectGradOk("logit", [](const V& in) { return logit(in[0]); }, {Pt({0.1, 0.5, 0.9})});
  ExpectGradOk("poch", [](const V& in) { return poch(in[0], in[1]); },
               {Pt({0.5, 3.0}), Pt({2.0, 1.5})});
}

// Near the edges of the domains: k and x small or large, x near 0 and 1 for betainc, z near 1.
TEST(SpecialTest, GradientsNearDomainEdges) {
  using V = std::vector<Var>;
  ExpectGradOk(
      "gammainc edges", [](const V& in) { return gammainc(in[0], in[1]); },
      {Pt({0.05, 0.2, 50.0, 3.0}), Pt({1e-3, 50.0, 45.0, 1e-4})}, 1e-3);
  ExpectGradOk(
      "gammaincc edges", [](const V& in) { return gammaincc(in[0], in[1]); },
      {Pt({0.05, 0.2, 50.0, 3.0}), Pt({1e-3, 50.0, 45.0, 1e-4})}, 1e-3);
  ExpectGradOk(
      "betainc edges", [](const V& in) { return betainc(in[0], in[1], in[2]); },
      {Pt({0.2, 3.0, 50.0}), Pt({4.0, 0.3, 60.0}), Pt({1e-3, 0.999, 0.45})}, 1e-3);
  ExpectGradOk(
      "tri_gamma near 0", [](const V& in) { return tri_gamma(in[0]); }, {Pt({0.05, 0.2})}, 1e-3);
  ExpectGradOk(
      "kve small x",
      [](const V& in) {
        return kve(constant(Pt({0.0, 1.5})), in[0]);
      },
      {Pt({0.05, 0.1})}, 1e-3);
  ExpectGradOk(
      "hyp2f1 z near 1",
      [](const V& in) {
        return hyp2f1(constant(Pt({0.5, 1.5})), constant(Pt({0.5, 0.3})), constant(Pt({2.5, 4.0})),
                      in[0]);
      },
      {Pt({0.95, 0.97})}, 1e-3);
}

TEST(SpecialTest, NoGradientWhereAesaraHasNone) {
  const Var k = dscalar("k"), x = dscalar("x");
  for (const Var& y : {gammau(k, x), gammal(k, x), gammainc_der(k, x), jv(k, x)}) {
    const Var g = grad(y, k);
    EXPECT_FALSE(g.ok()) << y->owner()->op().Name();
    EXPECT_NE(g.status().message().find("grad"), std::string::npos) << g.status();
  }
}

TEST(SpecialTest, FusesIntoComposite) {
  const Var k = dvector("k"), x = dvector("x");
  const Var y = gammainc(k, x) * 2.0 + betainc(k, k + 1.0, x / (x + 1.0));
  auto f = function({k, x}, {y});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({Pt({0.5, 2.5, 10.0}), Pt({0.5, 1.3, 3.0})});
  ASSERT_TRUE(out.ok()) << out.status();
  // scipy: 2 * gammainc(k, x) + betainc(k, k + 1, x / (x + 1))
  const std::vector<double> expected = {2.0573109750238143, 1.249683037746316, 0.9982628345961475};
  const std::vector<double> got = testing::Elements((*out)[0]);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(got[i], expected[i], 1e-12 * expected[i]) << i;
}

}  // namespace
}  // namespace kiln
