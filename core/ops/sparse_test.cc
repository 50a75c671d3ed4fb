#include "core/ops/sparse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_join.h"
#include "core/grad/verify_grad.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

using testing::Elements;
using testing::ParseValues;

Tensor Floats(const std::string& values, Shape shape) {
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), ParseValues(values));
}
Tensor FloatVector(const std::string& values) {
  return Floats(values, {static_cast<int64_t>(ParseValues(values).size())});
}
Tensor Ints(const std::string& values) {
  std::vector<double> v = ParseValues(values);
  return *Tensor::FromValues<double>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}
Tensor IntsOf(std::vector<int64_t> v) {
  return *Tensor::FromValues<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

// Runs outputs as a function of inputs on the values.
std::vector<Tensor> Evaluate(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                             const std::vector<Tensor>& values) {
  auto f = function(inputs, outputs);
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return {};
  auto result = (*f)(values);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : std::vector<Tensor>{};
}

// The status of running outputs on the values (the error a malformed matrix gets).
absl::Status RunStatus(const std::vector<Var>& inputs, const std::vector<Var>& outputs,
                       const std::vector<Tensor>& values) {
  auto f = function(inputs, outputs);
  if (!f.ok()) return f.status();
  return (*f)(values).status();
}

void ExpectClose(const Tensor& got, const std::vector<double>& want) {
  const std::vector<double> g = Elements(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-12 * (1 + std::abs(want[i])));
}

// A CSR matrix's arrays as graph inputs.
struct Csr {
  Var data = dvector("data"), indices = lvector("indices"), indptr = lvector("indptr");
  Var rows() const { return expand_indptr(indptr); }
};

// data of a structure merge: zeros(nnz) incremented at `pos` by `values`.
Var Scatter(const Var& nnz_like, const Var& pos, const Var& values) {
  return inc_subtensor(take(zeros({shape_i(nnz_like, 0)}), pos), values);
}

// Every case of tests/golden/numpy_sparse.txt (SciPy's CSR arithmetic on random matrices, with
// empty rows and an empty matrix) through the ops.
TEST(SparseTest, MatchesSciPy) {
  const auto cases = testing::ReadCases("tests/golden/numpy_sparse.txt");
  ASSERT_EQ(cases.size(), 6u);
  for (const auto& c : cases) {
    ASSERT_EQ(c.size(), 25u);
    SCOPED_TRACE(c[0]);
    const Shape mkn = testing::ParseShape(c[0]);
    const int64_t m = mkn[0], k = mkn[1], n = mkn[2];
    const Csr a, cm, d;
    const Var b = dmatrix("b"), x = dmatrix("x"), y = dmatrix("y"), dense = dmatrix("dense");
    const Var rows = a.rows();
    const std::vector<Var> product =
        sparse_product_pairs(a.indices, a.indptr, cm.indices, cm.indptr, constant(n));
    const Var product_data =
        Scatter(product[0], product[4], take(a.data, product[2]) * take(cm.data, product[3]));
    const std::vector<Var> sum = sparse_union(a.indices, a.indptr, d.indices, d.indptr);
    const Var sum_data = inc_subtensor(take(Scatter(sum[0], sum[2], a.data), sum[3]), d.data);
    const std::vector<Var> meet = sparse_intersection(a.indices, a.indptr, d.indices, d.indptr);
    const Var meet_data = take(a.data, meet[2]) * take(d.data, meet[3]);
    const std::vector<Var> outs = {
        sparse_dot(a.data, rows, a.indices, constant(m), b),
        sparse_dot(a.data, a.indptr, a.indices, constant(m), b, /*compressed=*/true),
        product_data,
        product[0],
        product[1],
        sum_data,
        sum[0],
        sum[1],
        meet_data,
        meet[0],
        meet[1],
        sampled_dot(rows, a.indices, x, y),
        sparse_to_dense(a.data, rows, a.indices, make_vector({constant(m), constant(k)})),
        sparse_gather(dense, rows, a.indices),
        compress_indptr(rows, constant(m))};
    const Tensor dense_a = Floats(c[24], {m, k});
    const std::vector<Tensor> r =
        Evaluate({a.data, a.indices, a.indptr, b, cm.data, cm.indices, cm.indptr, d.data, d.indices,
                  d.indptr, x, y, dense},
                 outs,
                 {FloatVector(c[1]), Ints(c[2]), Ints(c[3]), Floats(c[4], {k, n}),
                  FloatVector(c[5]), Ints(c[6]), Ints(c[7]), FloatVector(c[8]), Ints(c[9]),
                  Ints(c[10]), Floats(c[11], {m, 3}), Floats(c[12], {k, 3}), dense_a});
    ASSERT_EQ(r.size(), outs.size());
    for (int form = 0; form < 2; ++form) {  // from row coordinates and from the indptr
      EXPECT_EQ(r[form].shape(), (Shape{m, n}));
      ExpectClose(r[form], ParseValues(c[13]));
    }
    for (int part = 0; part < 3; ++part) {  // A @ C, A + D, A * D: data, indices, indptr
      ExpectClose(r[2 + 3 * part], ParseValues(c[14 + 3 * part]));
      EXPECT_EQ(Elements(r[3 + 3 * part]), ParseValues(c[15 + 3 * part]));
      EXPECT_EQ(Elements(r[4 + 3 * part]), ParseValues(c[16 + 3 * part]));
    }
    ExpectClose(r[11], ParseValues(c[23]));
    EXPECT_EQ(Elements(r[12]), Elements(dense_a));
    EXPECT_EQ(Elements(r[13]), ParseValues(c[1]));  // the dense matrix at A's entries
    EXPECT_EQ(Elements(r[14]), ParseValues(c[3]));  // the indptr back from the rows
  }
}

TEST(SparseTest, ShapesAreInferredWithoutRunningTheKernels) {
  const Csr a;
  const Var b = dmatrix("b");
  const Var out = sparse_dot(a.data, a.rows(), a.indices, constant(int64_t{4}), b);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->type()->ToString(), "TensorType(float64, (4, ?))");
  absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(out);
  ASSERT_TRUE(dims.ok()) << dims.status();
  const Var dense =
      sparse_to_dense(a.data, a.rows(), a.indices, make_vector({constant(3), constant(5)}));
  absl::StatusOr<std::vector<VariablePtr>> dense_dims = infer_shape(dense);
  ASSERT_TRUE(dense_dims.ok()) << dense_dims.status();
  const std::vector<Tensor> r =
      Evaluate({b}, {(*dims)[0], (*dims)[1], (*dense_dims)[0], (*dense_dims)[1]},
               {Floats("1,2,3,4,5,6", {3, 2})});
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(ScalarInt(r[0]), 4);
  EXPECT_EQ(ScalarInt(r[1]), 2);
  EXPECT_EQ(ScalarInt(r[2]), 3);
  EXPECT_EQ(ScalarInt(r[3]), 5);
}

// Finite differences for every gradient: the products' (to both operands, so their gradients'
// gradients too), the dense form's and the gather's, at a matrix with an empty row and a repeated
// coordinate.
TEST(SparseTest, GradientsMatchFiniteDifferences) {
  const Var rows = constant(IntsOf({0, 0, 2, 3, 3})), cols = constant(IntsOf({1, 1, 0, 2, 1}));
  const Tensor data = Floats("0.5,-1.25,2.0,0.75,1.5", {5});
  const Tensor b = Floats("1,2,-3,0.5,0.25,-1,2,1.5,-0.5", {3, 3});
  const Tensor x = Floats("1,-2,0.5,3,0.25,-1,2,1,0.5,-0.75,1.5,2", {4, 3});
  absl::Status s = verify_grad(
      [&](const std::vector<Var>& v) {
        return sparse_dot(v[0], rows, cols, constant(int64_t{4}), v[1]);
      },
      {data, b});
  EXPECT_TRUE(s.ok()) << s;
  const Var indptr = constant(IntsOf({0, 2, 2, 3, 5}));
  s = verify_grad(
      [&](const std::vector<Var>& v) {
        return sparse_dot(v[0], indptr, cols, constant(int64_t{4}), v[1], /*compressed=*/true);
      },
      {data, b});
  EXPECT_TRUE(s.ok()) << s;
  s = verify_grad([&](const std::vector<Var>& v) { return sampled_dot(rows, cols, v[0], v[1]); },
                  {x, b});
  EXPECT_TRUE(s.ok()) << s;
  s = verify_grad(
      [&](const std::vector<Var>& v) {
        return sparse_to_dense(v[0], rows, cols, make_vector({constant(4), constant(3)}));
      },
      {data});
  EXPECT_TRUE(s.ok()) << s;
  s = verify_grad([&](const std::vector<Var>& v) { return sparse_gather(v[0], rows, cols); }, {x});
  EXPECT_TRUE(s.ok()) << s;
  // Second order: the gradient of a sum of squares of the product, through SampledDot's LOp.
  s = verify_grad(
      [&](const std::vector<Var>& v) {
        const Var p = sparse_dot(v[0], rows, cols, constant(int64_t{4}), v[1]);
        return grad(sum(p * p), v[0]);
      },
      {data, b});
  EXPECT_TRUE(s.ok()) << s;
}

TEST(SparseTest, NamesTypesAndWireAttributes) {
  const Csr a;
  const Var out = sparse_dot(a.data, a.rows(), a.indices, lscalar("m"), fmatrix("b"));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(sampled_dot(a.rows(), a.indices, fmatrix(), fmatrix())->type()->ToString(),
            "TensorType(float32, (?,))");
  for (const char* name :
       {"SparseDot", "SampledDot", "SparseToDense", "SparseGather", "ExpandIndptr",
        "CompressIndptr", "SparseUnion", "SparseIntersection", "SparseProductPairs"}) {
    absl::StatusOr<OpPtr> op = MakeOp(name, {});
    ASSERT_TRUE(op.ok()) << op.status();
    if (std::string(name) == "SparseDot") continue;
    EXPECT_EQ((*op)->Name(), name);
    EXPECT_EQ((*op)->Key(), absl::StrCat(name, "{}"));
  }
  EXPECT_EQ(out->owner()->op().Name(), "SparseDot{compressed=False}");
  absl::StatusOr<OpPtr> compressed = MakeOp("SparseDot", {{"compressed", int64_t{1}}});
  ASSERT_TRUE(compressed.ok()) << compressed.status();
  EXPECT_EQ((*compressed)->Name(), "SparseDot{compressed=True}");
  const std::vector<Var> merged = sparse_union(a.indices, a.indptr, a.indices, a.indptr);
  ASSERT_EQ(merged.size(), 4u);
  for (const Var& v : merged) EXPECT_EQ(v->type()->ToString(), "TensorType(int64, (?,))");
}

TEST(SparseTest, WrongInputKindsAreRefusedByName) {
  const Csr a;
  EXPECT_EQ(sparse_dot(lvector("d"), a.rows(), a.indices, lscalar(), dmatrix()).status().message(),
            "SparseDot{compressed=False}: input 0 (data) has type TensorType(int64, (?,)) but a "
            "float32 or float64 "
            "vector is needed");
  EXPECT_EQ(sparse_dot(a.data, dvector(), a.indices, lscalar(), dmatrix()).status().message(),
            "SparseDot{compressed=False}: input 1 has type TensorType(float64, (?,)) but an "
            "integer vector is "
            "needed");
  EXPECT_EQ(sparse_dot(a.data, a.rows(), a.indices, lscalar(), dvector()).status().message(),
            "SparseDot{compressed=False}: input 4 (b) has type TensorType(float64, (?,)) but a "
            "float32 or float64 "
            "matrix is needed");
  EXPECT_EQ(sampled_dot(a.rows(), a.indices, tensor(DType::kFloat64, {2, 3}),
                        tensor(DType::kFloat64, {2, 4}))
                .status()
                .message(),
            "SampledDot: input 2 (x) has type TensorType(float64, (2, 3)) but input 3 (y) has "
            "TensorType(float64, (2, 4)): x and y need as many columns");
  EXPECT_EQ(sparse_to_dense(a.data, a.rows(), a.indices, lvector()).status().ok(), true);
  EXPECT_EQ(
      sparse_to_dense(a.data, a.rows(), a.indices, constant(IntsOf({1, 2, 3}))).status().message(),
      "SparseToDense: input 3 (shape) has type TensorType(int64, (3,)) but a shape of 2 "
      "dims is needed");
}

// A client's malformed matrix is an INVALID_ARGUMENT naming the op and the bad entry, never a
// read out of bounds.
TEST(SparseTest, MalformedStructuresAreRefused) {
  const Var data = dvector("data"), rows = lvector("rows"), cols = lvector("cols");
  const Var b = dmatrix("b");
  const Var product = sparse_dot(data, rows, cols, constant(int64_t{2}), b);
  const Tensor b_value = Floats("1,2,3,4", {2, 2});
  auto dot_error = [&](std::vector<int64_t> r, std::vector<int64_t> c) {
    return RunStatus({data, rows, cols, b}, {product},
                     {Floats("1,2", {2}), IntsOf(std::move(r)), IntsOf(std::move(c)), b_value})
        .ToString();
  };
  EXPECT_EQ(dot_error({0, 2}, {0, 1}),
            "INVALID_ARGUMENT: SparseDot{compressed=False}: input 1 (rows) has 2 at entry 1, "
            "outside [0, 2) "
            "(n_rows)");
  EXPECT_EQ(dot_error({0, 1}, {-1, 1}),
            "INVALID_ARGUMENT: SparseDot{compressed=False}: input 2 (cols) has -1 at entry 0, "
            "outside [0, 2) (the "
            "rows of input 4 (b))");
  EXPECT_EQ(dot_error({0}, {0, 1}),
            "INVALID_ARGUMENT: SparseDot{compressed=False}: input 1 (rows) has 1 entries but input "
            "0 (data) has 2");

  const Var indptr = lvector("indptr");
  const Var csr_product = sparse_dot(data, indptr, cols, constant(int64_t{2}), b, true);
  auto csr_error = [&](std::vector<int64_t> p, std::vector<int64_t> c) {
    return RunStatus({data, indptr, cols, b}, {csr_product},
                     {Floats("1,2", {2}), IntsOf(std::move(p)), IntsOf(std::move(c)), b_value})
        .ToString();
  };
  EXPECT_EQ(csr_error({0, 1, 2}, {0, 1}), "OK");
  EXPECT_EQ(csr_error({0, 2}, {0, 1}),
            "INVALID_ARGUMENT: SparseDot{compressed=True}: input 1 (indptr) has 2 entries but "
            "input 3 (n_rows) is 2");
  // An n_rows whose successor overflows int64 is refused like any other mismatch.
  const Var huge_rows = lscalar("huge_rows");
  EXPECT_EQ(RunStatus({data, indptr, cols, b, huge_rows},
                      {sparse_dot(data, indptr, cols, huge_rows, b, /*compressed=*/true)},
                      {Floats("1,2", {2}), IntsOf({0, 1, 2}), IntsOf({0, 1}), b_value,
                       *Tensor::Of<int64_t>(DType::kInt64, {}, {INT64_MAX})})
                .ToString(),
            "INVALID_ARGUMENT: SparseDot{compressed=True}: input 1 (indptr) has 3 entries but "
            "input 3 (n_rows) is 9223372036854775807");
  EXPECT_EQ(csr_error({0, 2, 1}, {0, 1}),
            "INVALID_ARGUMENT: SparseDot{compressed=True}: input 1 (indptr) decreases at entry 2");
  EXPECT_EQ(csr_error({0, 1, 2}, {0, 2}),
            "INVALID_ARGUMENT: SparseDot{compressed=True}: input 2 (cols) has 2 at entry 1, "
            "outside [0, 2) (the rows of input 4 (b))");
  const Var expanded = expand_indptr(indptr);
  auto expand_error = [&](std::vector<int64_t> p) {
    return RunStatus({indptr}, {expanded}, {IntsOf(std::move(p))}).ToString();
  };
  EXPECT_EQ(expand_error({1, 2}),
            "INVALID_ARGUMENT: ExpandIndptr: input 0 (indptr) must start at 0");
  EXPECT_EQ(expand_error({0, 3, 2}),
            "INVALID_ARGUMENT: ExpandIndptr: input 0 (indptr) decreases at entry 2");
  EXPECT_EQ(expand_error({}), "INVALID_ARGUMENT: ExpandIndptr: input 0 (indptr) must start at 0");

  const Var ia = lvector("ia"), pa = lvector("pa"), ib = lvector("ib"), pb = lvector("pb");
  const std::vector<Var> merged = sparse_union(ia, pa, ib, pb);
  auto union_error = [&](std::vector<int64_t> a_idx, std::vector<int64_t> a_ptr,
                         std::vector<int64_t> b_ptr) {
    return RunStatus({ia, pa, ib, pb}, {merged[0]},
                     {IntsOf(std::move(a_idx)), IntsOf(std::move(a_ptr)), IntsOf({0}),
                      IntsOf(std::move(b_ptr))})
        .ToString();
  };
  EXPECT_EQ(union_error({2, 1}, {0, 2}, {0, 1}),
            "INVALID_ARGUMENT: SparseUnion: input 0 (indices) are not sorted and unique in row 0 "
            "(entry 1)");
  EXPECT_EQ(union_error({1, 1}, {0, 2}, {0, 1}),
            "INVALID_ARGUMENT: SparseUnion: input 0 (indices) are not sorted and unique in row 0 "
            "(entry 1)");
  EXPECT_EQ(union_error({1}, {0, 2}, {0, 1}),
            "INVALID_ARGUMENT: SparseUnion: input 1 (indptr) ends at 2 but there are 1 indices");
  EXPECT_EQ(union_error({1}, {0, 1}, {0, 0, 1}),
            "INVALID_ARGUMENT: SparseUnion: input 1 (indptr_a) has 2 entries but input 3 "
            "(indptr_b) has 3: the matrices need as many rows");

  const Var n = lscalar("n");
  const Var compressed = compress_indptr(rows, n);
  EXPECT_EQ(RunStatus({rows, n}, {compressed},
                      {IntsOf({1, 0}), *Tensor::Of<int64_t>(DType::kInt64, {}, {3})})
                .ToString(),
            "INVALID_ARGUMENT: CompressIndptr: input 0 (rows) is not sorted");
}

// A product whose pairs would take 2^44 int64 entries is refused before any pass over them: it
// fails at once, not after hours.
TEST(SparseTest, AHugeProductIsRefusedBeforeItsWork) {
  const int64_t k = int64_t{1} << 22;
  std::vector<int64_t> a_idx(k, 0), b_idx(k);
  for (int64_t i = 0; i < k; ++i) b_idx[i] = i;
  const Var ia = lvector("ia"), pa = lvector("pa"), ib = lvector("ib"), pb = lvector("pb");
  const Var n_cols = lscalar("n_cols");
  const std::vector<Var> pairs = sparse_product_pairs(ia, pa, ib, pb, n_cols);
  const auto start = std::chrono::steady_clock::now();
  const absl::Status s = RunStatus({ia, pa, ib, pb, n_cols}, {pairs[2]},
                                   {IntsOf(a_idx), IntsOf({0, k}), IntsOf(b_idx), IntsOf({0, k}),
                                    *Tensor::Of<int64_t>(DType::kInt64, {}, {k})});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("SparseProductPairs"), std::string::npos) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace kiln
