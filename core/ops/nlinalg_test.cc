// The nlinalg ops against Aesara 2.9.4 and numpy.linalg (tests/golden/aesara_nlinalg.txt, written
// by tests/golden/gen_nlinalg_cases.py): printed names, output types, values from contiguous and
// strided inputs, inferred shapes; then builders, types and every error.
#include "core/ops/nlinalg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/nlinalg_decomp.h"
#include "core/ops/nlinalg_norm.h"
#include "core/ops/op_util.h"
#include "core/tensor/call_limits.h"
#include "tests/testing/numpy_cases.h"
#include "tests/testing/op_cases.h"

namespace kiln {
namespace {

// Every op the golden file can name, built through the ops' attributes.
std::vector<OpPtr> Candidates() {
  std::vector<OpPtr> ops = {std::make_shared<MatrixInverse>(),
                            std::make_shared<Det>(),
                            std::make_shared<SLogDet>(),
                            std::make_shared<Eig>(),
                            std::make_shared<Lstsq>(),
                            std::make_shared<TensorInv>(),
                            std::make_shared<TensorInv>(TensorInvAttrs{1}),
                            std::make_shared<TensorSolve>(),
                            std::make_shared<TensorSolve>(TensorSolveAttrs{std::vector<int>{0}})};
  for (bool h : {false, true}) ops.push_back(std::make_shared<MatrixPinv>(MatrixPinvAttrs{h}));
  for (const char* uplo : {"L", "U"}) ops.push_back(std::make_shared<Eigh>(EighAttrs{uplo}));
  for (const char* mode : {"reduced", "complete", "r", "raw"}) {
    ops.push_back(std::make_shared<QRFull>(QRFullAttrs{mode}));
  }
  for (bool full : {false, true}) {
    for (bool uv : {false, true}) ops.push_back(std::make_shared<SVD>(SVDAttrs{full, uv}));
  }
  return ops;
}

bool Single(DType d) { return d == DType::kFloat32 || d == DType::kComplex64; }

// |got - want| within the dtype's tolerance, relative to the largest |want|; with
// `column_signs`, each column (and for a row basis, each row) may be negated, as eigenvectors
// and singular vectors are defined up to sign.
void ExpectClose(const Tensor& got, const Tensor& want, bool column_signs, bool single = false) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<double> g = testing::Elements(got);
  const std::vector<double> w = testing::Elements(want);
  double scale = 0;
  for (double v : w) scale = std::isfinite(v) ? std::max(scale, std::abs(v)) : scale;
  const double tol = (single || Single(want.dtype()) ? 3e-5 : 1e-10) * std::max(1.0, scale);
  if (column_signs && want.ndim() == 2 && !IsComplex(want.dtype())) {
    const int64_t rows = want.shape()[0], cols = want.shape()[1];
    for (int64_t j = 0; j < cols; ++j) {
      double dot = 0;
      for (int64_t i = 0; i < rows; ++i) dot += g[i * cols + j] * w[i * cols + j];
      if (dot < 0) {
        for (int64_t i = 0; i < rows; ++i) g[i * cols + j] = -g[i * cols + j];
      }
    }
  }
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "element " << i;
    } else if (std::isinf(w[i])) {
      EXPECT_EQ(g[i], w[i]) << "element " << i;
    } else {
      EXPECT_NEAR(g[i], w[i], tol) << "element " << i;
    }
  }
}

// Whether output i of the op named `name` is defined up to the signs of its columns.
bool SignFree(const std::string& name, size_t i) {
  if (name == "Eig" || name.rfind("Eigh", 0) == 0) return i == 1;
  if (name.rfind("SVD", 0) == 0) return name.find("compute_uv=True") != std::string::npos;
  return false;
}

TEST(NlinalgTest, MatchesAesaraAndNumpy) {
  const int checked = testing::CheckOpCases(
      "tests/golden/aesara_nlinalg.txt", Candidates(),
      [](const testing::OpCase& c, size_t i, const Tensor& got) {
        // Computed in single precision when an input is, whatever the output dtype.
        const bool single_inputs = std::any_of(c.in.begin(), c.in.end(),
                                               [](const Tensor& t) { return Single(t.dtype()); });
        ExpectClose(got, c.want[i], SignFree(c.name, i), single_inputs);
      });
  EXPECT_GE(checked, 60);
}

TEST(NlinalgTest, NamesAndTypes) {
  const Var x = dmatrix("x");
  EXPECT_EQ(matrix_inverse(x)->owner()->op().Name(), "MatrixInverse");
  EXPECT_EQ(pinv(x, true)->owner()->op().Name(), "MatrixPinv{hermitian=True}");
  EXPECT_EQ(det(x)->owner()->op().Name(), "Det");
  EXPECT_EQ(eigh(x, "U")[0]->owner()->op().Name(), "Eigh{UPLO='U'}");
  EXPECT_EQ(qr(x)[0]->owner()->op().Name(), "QRFull{mode='reduced'}");
  EXPECT_EQ(svd(x)[0]->owner()->op().Name(), "SVD{full_matrices=True, compute_uv=True}");
  EXPECT_EQ(tensorinv(dtensor3("a"))->owner()->op().Name(), "TensorInv{ind=2}");
  EXPECT_EQ(tensorsolve(dtensor3("a"), dvector("b"), std::vector<int>{0, 1})->owner()->op().Name(),
            "TensorSolve{axes=(0, 1)}");
  EXPECT_EQ(tensorsolve(dmatrix("a"), dvector("b"))->owner()->op().Name(),
            "TensorSolve{axes=None}");
  // Aesara's types: x.type() for the inverse (static dims kept), scalars of x's dtype for det.
  EXPECT_EQ(matrix_inverse(tensor(DType::kFloat32, {3, 3}))->type()->ToString(),
            "TensorType(float32, (3, 3))");
  EXPECT_EQ(pinv(tensor(DType::kFloat64, {2, 5}))->type()->ToString(),
            "TensorType(float64, (5, 2))");
  EXPECT_EQ(det(lmatrix("i"))->type()->ToString(), "TensorType(int64, ())");
  const std::vector<Var> sl = slogdet(fmatrix("f"));
  EXPECT_EQ(sl[0]->type()->ToString(), "TensorType(float32, ())");
  EXPECT_EQ(sl[1]->type()->ToString(), "TensorType(float32, ())");
  EXPECT_EQ(eigh(lmatrix("i"))[1]->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(eigh(zmatrix("z"))[0]->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(eigh(zmatrix("z"))[1]->type()->ToString(), "TensorType(complex128, (?, ?))");
  EXPECT_EQ(qr(imatrix("i"), "raw")[1]->type()->ToString(), "TensorType(float32, (?,))");
  EXPECT_EQ(svd(lmatrix("i"), false, false)[0]->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(qr(x, "r").size(), 1u);
  const std::vector<Var> ls = lstsq(fmatrix("a"), fvector("b"), constant(-1.0));
  std::vector<std::string> types;
  for (const Var& v : ls) types.push_back(v->type()->ToString());
  EXPECT_EQ(absl::StrJoin(types, " "),
            "TensorType(float64, (?,)) TensorType(float64, (?,)) TensorType(int64, ()) "
            "TensorType(float64, (?,))");
  EXPECT_EQ(tensorinv(tensor(DType::kFloat64, {2, 3, 6}))->type()->ToString(),
            "TensorType(float64, (6, 2, 3))");
  EXPECT_EQ(tensorsolve(tensor(DType::kFloat64, {2, 3, 6}), lmatrix("b"))->type()->ToString(),
            "TensorType(float64, (6,))");
  EXPECT_EQ(tensorsolve(lmatrix("a"), lvector("b"))->type()->ToString(),
            "TensorType(float64, (?,))");
}

// Values of the builders that are graphs: matrix_power, trace, matrix_dot; and edge values.
TEST(NlinalgTest, BuildersAndEdgeValues) {
  const Var m = dmatrix("m");
  const Tensor a = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {1.0, 2.0, 3.0, 4.0});
  auto eval = [&](const Var& out, const Tensor& value) {
    auto f = function({m}, {out});
    EXPECT_TRUE(f.ok()) << f.status();
    auto r = (*f)({value});
    EXPECT_TRUE(r.ok()) << r.status();
    return testing::Elements((*r)[0]);
  };
  // numpy.linalg.matrix_power([[1, 2], [3, 4]], n) for n = 5, 0, 2 and -1 (the inverse).
  EXPECT_EQ(eval(matrix_power(m, 5), a), (std::vector<double>{1069, 1558, 2337, 3406}));
  EXPECT_EQ(eval(matrix_power(m, 0), a), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(eval(matrix_power(m, 2), a), (std::vector<double>{7, 10, 15, 22}));
  const std::vector<double> inv = eval(matrix_power(m, -1), a);
  const std::vector<double> want = {-2, 1, 1.5, -0.5};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(inv[i], want[i], 1e-12);
  EXPECT_EQ(eval(trace(m), a), (std::vector<double>{5}));
  EXPECT_EQ(eval(matrix_dot({m, m, m}), a), (std::vector<double>{37, 54, 81, 118}));
  // Empty matrices: det 1, an empty inverse.
  EXPECT_EQ(eval(det(m), Tensor::Zeros(DType::kFloat64, {0, 0})), (std::vector<double>{1}));
  EXPECT_TRUE(eval(matrix_inverse(m), Tensor::Zeros(DType::kFloat64, {0, 0})).empty());
  // Complex Eigh: w real, v complex, a v = v diag(w).
  const Var z = zmatrix("z");
  const std::vector<Var> wv = eigh(z);
  auto f = function({z}, {wv[0], wv[1]});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor h = testing::MakeTensor("complex128", "2x2", "2.0;0.0,1.0;-1.0,1.0;1.0,3.0;0.0");
  auto r = (*f)({h});
  ASSERT_TRUE(r.ok()) << r.status();
  // numpy.linalg.eigvalsh([[2, 1 - 1j], [1 + 1j, 3]]) = [1, 4].
  ExpectClose((*r)[0], testing::MakeTensor("float64", "2", "1.0,4.0"), false);
  EXPECT_EQ((*r)[1].dtype(), DType::kComplex128);
}

// norm against numpy.linalg.norm of m = [[1, -2, 3], [-4, 5, -6]] and v = [3, 0, -4, 1].
TEST(NlinalgTest, NormMatchesNumpy) {
  const Var m = dmatrix("m"), v = dvector("v");
  const Tensor mv = *Tensor::Of<double>(DType::kFloat64, {2, 3}, {1, -2, 3, -4, 5, -6});
  const Tensor vv = *Tensor::Of<double>(DType::kFloat64, {4}, {3, 0, -4, 1});
  auto eval = [&](const Var& x, const Var& out, const Tensor& value) {
    auto f = function({x}, {out});
    EXPECT_TRUE(f.ok()) << f.status();
    auto r = (*f)({value});
    EXPECT_TRUE(r.ok()) << r.status();
    return testing::Elements((*r)[0]);
  };
  const double inf = std::numeric_limits<double>::infinity();
  // (ord, norm(m, ord), norm(m, ord, axis=(1, 0)))
  const std::vector<std::tuple<NormOrd, double, double>> matrix = {
      {NormOrd{}, 9.539392014169456, 9.539392014169456},
      {std::string("fro"), 9.539392014169456, 9.539392014169456},
      {std::string("inf"), 15.0, 9.0},
      {-inf, 6.0, 5.0},
      {1.0, 9.0, 15.0},
      {-1.0, 5.0, 6.0},
      {2.0, 9.508032000695724, 9.508032000695724},
      {-2.0, 0.7728696356734843, 0.772869635673485},
      {std::string("nuc"), 10.280901636369208, 10.28090163636921}};
  for (const auto& [ord, whole, swapped] : matrix) {
    EXPECT_NEAR(eval(m, norm(m, ord), mv)[0], whole, 1e-12);
    EXPECT_NEAR(eval(m, norm(m, ord, {1, 0}), mv)[0], swapped, 1e-12);
  }
  // (ord, norm(v, ord), norm(m, ord, axis=1))
  const std::vector<std::tuple<NormOrd, double, std::vector<double>>> vector = {
      {NormOrd{}, 5.0990195135927845, {3.7416573867739413, 8.774964387392123}},
      {inf, 4.0, {3.0, 6.0}},
      {std::string("-inf"), 0.0, {1.0, 4.0}},
      {0.0, 3.0, {3.0, 3.0}},
      {1.0, 8.0, {6.0, 15.0}},
      {3.0, 4.514357435474001, {3.3019272488946263, 7.398636222991409}},
      {0.5, 22.392304845413257, {17.191508225450303, 44.69668203123519}}};
  for (const auto& [ord, whole, rows] : vector) {
    EXPECT_NEAR(eval(v, norm(v, ord), vv)[0], whole, 1e-12);
    const std::vector<double> got = eval(m, norm(m, ord, {1}), mv);
    ASSERT_EQ(got.size(), 2u);
    for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(got[i], rows[i], 1e-12);
  }
  EXPECT_EQ(norm(m, 2.0, {}, true)->type()->ToString(), "TensorType(float64, (1, 1))");
  EXPECT_EQ(norm(m, 1.0, {-1}, true)->type()->ToString(), "TensorType(float64, (?, 1))");
  EXPECT_EQ(norm(v, std::string("nuc")).status().message(),
            "norm: Invalid norm order 'nuc' for vectors");
  EXPECT_EQ(norm(m, 3.0).status().message(), "norm: Invalid norm order for matrices: 3");
  EXPECT_EQ(norm(dscalar("s")).status().message(), "norm: 'axis' entry is out of bounds.");
  EXPECT_EQ(norm(dtensor3("t"), 2.0).status().message(),
            "norm: the orders 2, -2 and 'nuc' take the SVD of one matrix");
  EXPECT_TRUE(
      verify_grad([](const std::vector<Var>& in) { return norm(in[0], std::string("nuc")); }, {mv})
          .ok());
}

TEST(NlinalgTest, Errors) {
  EXPECT_EQ(det(dvector("v")).status().message(),
            "Det: input 0 has type TensorType(float64, (?,)) but a matrix is needed");
  EXPECT_EQ(matrix_inverse(tensor(DType::kFloat64, {2, 3})).status().message(),
            "MatrixInverse: input 0 has type TensorType(float64, (2, 3)): the matrix is not "
            "square");
  EXPECT_EQ(qr(dmatrix("x"), "foo")[0].status().message(),
            "QRFull{mode='foo'}: Unrecognized mode 'foo'");
  EXPECT_EQ(eigh(dmatrix("x"), "X")[0].status().message(),
            "Eigh{UPLO='X'}: UPLO must be 'L' or 'U', not 'X'");
  EXPECT_EQ(svd(zmatrix("z"))[0].status().message(),
            "SVD{full_matrices=True, compute_uv=True}: input 0 has type TensorType(complex128, "
            "(?, ?)): there is no float dtype of its itemsize (16 bytes) for the output");
  EXPECT_EQ(tensorinv(dtensor3("a"), 0).status().message(),
            "TensorInv{ind=0}: Invalid ind argument: 0");
  EXPECT_EQ(tensorsolve(dvector("a"), dmatrix("b")).status().message(),
            "TensorSolve{axes=None}: input 0 has type TensorType(float64, (?,)) and input 1 "
            "TensorType(float64, (?, ?)): a needs at least b's rank");
  EXPECT_EQ(lstsq(dmatrix("a"), dtensor3("b"), constant(-1.0))[0].status().message(),
            "Lstsq: input 1 has type TensorType(float64, (?, ?, ?)) but a vector or a matrix is "
            "needed");

  // Values: non-square and singular matrices, mismatched shapes, numpy's LinAlgError words.
  const Var x = dmatrix("x");
  auto run = [&](const Var& out, std::vector<Var> in, std::vector<Tensor> args) {
    auto f = function(in, {out});
    EXPECT_TRUE(f.ok()) << f.status();
    return (*f)(args).status();
  };
  const Tensor singular = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 2, 2, 4});
  EXPECT_EQ(run(matrix_inverse(x), {x}, {singular}).message(), "MatrixInverse: Singular matrix");
  EXPECT_EQ(run(matrix_inverse(x), {x}, {Tensor::Zeros(DType::kFloat64, {2, 3})}).message(),
            "MatrixInverse: input 0 has shape (2, 3): Last 2 dimensions of the array must be "
            "square");
  EXPECT_EQ(run(det(x), {x}, {Tensor::Zeros(DType::kFloat64, {3, 2})}).message(),
            "Det: input 0 has shape (3, 2): Last 2 dimensions of the array must be square");
  const Var a3 = dtensor3("a"), b = dvector("b"), bm = dmatrix("bm");
  EXPECT_EQ(
      run(tensorsolve(x, b), {x, b}, {singular, *Tensor::Of<double>(DType::kFloat64, {2}, {1, 1})})
          .message(),
      "TensorSolve{axes=None}: Singular matrix");
  EXPECT_EQ(run(tensorinv(a3), {a3}, {Tensor::Zeros(DType::kFloat64, {2, 3, 5})}).message(),
            "TensorInv{ind=2}: input 0 has shape (2, 3, 5), read as a (5, 6) matrix: Last 2 "
            "dimensions of the array must be square");
  EXPECT_EQ(run(lstsq(x, b, constant(-1.0))[0], {x, b},
                {Tensor::Zeros(DType::kFloat64, {3, 2}), Tensor::Zeros(DType::kFloat64, {4})})
                .message(),
            "Lstsq: input 0 has shape (3, 2) and input 1 (4,): Incompatible dimensions");
  // Hostile sizes: outputs of 2^80 elements from empty inputs, refused before allocation.
  const Tensor wide = Tensor::Zeros(DType::kFloat64, {0, int64_t{1} << 40});
  const absl::Status full = run(svd(x)[2], {x}, {wide});
  EXPECT_NE(full.message().find("SVD{full_matrices=True, compute_uv=True}"), std::string::npos)
      << full;
  const absl::Status huge = run(lstsq(x, bm, constant(-1.0))[0], {x, bm},
                                {wide, Tensor::Zeros(DType::kFloat64, {0, int64_t{1} << 40})});
  EXPECT_NE(huge.message().find("Lstsq"), std::string::npos) << huge;
  const absl::Status overflow =
      run(tensorinv(a3), {a3},
          {Tensor::Zeros(DType::kFloat64, {int64_t{1} << 40, int64_t{1} << 40, 0})});
  EXPECT_NE(overflow.message().find("TensorInv{ind=2}"), std::string::npos) << overflow;
  EXPECT_EQ(matrix_power(x, std::numeric_limits<int64_t>::min()).status().message(),
            "matrix_power: the power -9223372036854775808 has no positive opposite");
}

}  // namespace
}  // namespace kiln
