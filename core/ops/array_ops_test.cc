// The array ops of diagonal.h, searchsorted.h, unique.h, ravel_index.h, broadcast_to.h and
// topk.h against NumPy (tests/golden/numpy_array_funcs.txt): values, dtypes, and the inferred
// shapes against the values' shapes; then their names and wire identity.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/broadcast_to.h"
#include "core/ops/diagonal.h"
#include "core/ops/op_util.h"
#include "core/ops/ravel_index.h"
#include "core/ops/searchsorted.h"
#include "core/ops/topk.h"
#include "core/ops/unique.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

using Builder = std::function<std::vector<Var>(const std::vector<Var>&, const std::string&)>;

int ToInt(const std::string& s) {
  int v = 0;
  EXPECT_TRUE(absl::SimpleAtoi(s, &v)) << s;
  return v;
}

// "off,a1,a2" -> the ints.
std::vector<int> Ints(const std::string& param) {
  std::vector<int> out;
  for (absl::string_view p : absl::StrSplit(param, ',')) out.push_back(ToInt(std::string(p)));
  return out;
}

// Each golden function's graph from its inputs and param.
const std::map<std::string, Builder>& Builders() {
  static const auto* builders = new std::map<std::string, Builder>{
      {"searchsorted",
       [](const std::vector<Var>& in, const std::string& side) {
         if (in.size() == 3) return std::vector<Var>{searchsorted(in[0], in[1], side, in[2])};
         return std::vector<Var>{searchsorted(in[0], in[1], side)};
       }},
      {"unique",
       [](const std::vector<Var>& in, const std::string& param) {
         std::vector<std::string> p = absl::StrSplit(param, ',');
         std::optional<int> axis;
         if (p[3] != "None") axis = ToInt(p[3]);
         return unique(in[0], p[0] == "1", p[1] == "1", p[2] == "1", axis);
       }},
      {"unravel_index",
       [](const std::vector<Var>& in, const std::string& order) {
         return unravel_index(in[0], in[1], order);
       }},
      {"ravel_multi_index",
       [](const std::vector<Var>& in, const std::string& param) {
         std::vector<std::string> p = absl::StrSplit(param, ',');
         return std::vector<Var>{
             ravel_multi_index({in.begin(), in.end() - 1}, in.back(), p[0], p[1])};
       }},
      {"extract_diag",
       [](const std::vector<Var>& in, const std::string& param) {
         const std::vector<int> p = Ints(param);
         return std::vector<Var>{diagonal(in[0], p[0], p[1], p[2])};
       }},
      {"alloc_diag",
       [](const std::vector<Var>& in, const std::string& param) {
         const std::vector<int> p = Ints(param);
         return std::vector<Var>{ApplyOp(
             OpPtr(std::make_shared<AllocDiag>(AllocDiagAttrs{p[0], p[1], p[2]})), {in[0]})};
       }},
      {"fill_diagonal_offset",
       [](const std::vector<Var>& in, const std::string&) {
         return std::vector<Var>{fill_diagonal_offset(in[0], in[1], in[2])};
       }},
      {"tri",
       [](const std::vector<Var>& in, const std::string& dtype) {
         return std::vector<Var>{tri(in[0], in[1], in[2], *ParseDType(dtype))};
       }},
      {"broadcast_to",
       [](const std::vector<Var>& in, const std::string&) {
         return std::vector<Var>{broadcast_to(in[0], {in.begin() + 1, in.end()})};
       }},
      {"choose",
       [](const std::vector<Var>& in, const std::string& mode) {
         return std::vector<Var>{choose(in[0], in[1], mode)};
       }},
      {"topk", [](const std::vector<Var>& in,
                  const std::string& axis) { return topk_and_argtopk(in[0], in[1], ToInt(axis)); }},
  };
  return *builders;
}

// Inputs that must be constants: the dims of (un)ravel_index (their length types the node).
bool ConstantInput(const std::string& fn, size_t i, size_t n) {
  return (fn == "unravel_index" && i == 1) || (fn == "ravel_multi_index" && i + 1 == n);
}

// Equal elements, NaN equal to NaN.
void ExpectSameElements(const Tensor& got, const Tensor& want) {
  const std::vector<double> a = testing::Elements(got), b = testing::Elements(want);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(b[i])) {
      EXPECT_TRUE(std::isnan(a[i])) << "at " << i << ": " << a[i];
    } else {
      EXPECT_EQ(a[i], b[i]) << "at " << i;
    }
  }
}

TEST(ArrayOpsTest, MatchesNumPy) {
  int cases = 0;
  for (const auto& c : testing::ReadCases("tests/golden/numpy_array_funcs.txt")) {
    SCOPED_TRACE(absl::StrJoin(c, "|"));
    const std::string& fn = c[0];
    size_t at = 2;
    const size_t n_in = ToInt(c[at++]);
    std::vector<Var> in;
    std::vector<Var> args;
    std::vector<Tensor> values;
    for (size_t i = 0; i < n_in; ++i, at += 3) {
      const Tensor t = testing::MakeTensor(c[at], c[at + 1], c[at + 2]);
      if (ConstantInput(fn, i, n_in)) {
        in.push_back(constant(t));
        continue;
      }
      in.push_back(tensor(t.dtype(), StaticShape(t.ndim()), absl::StrCat("in", i)));
      args.push_back(in.back());
      values.push_back(t);
    }
    const size_t n_out = ToInt(c[at++]);
    const std::vector<Var> outs = Builders().at(fn)(in, c[1]);
    ASSERT_EQ(outs.size(), n_out);
    std::vector<Var> fetched = outs;
    std::vector<size_t> first_dim;
    for (const Var& out : outs) {
      ASSERT_TRUE(out.ok()) << out.status();
      absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(out);
      ASSERT_TRUE(dims.ok()) << dims.status();
      first_dim.push_back(fetched.size());
      for (const VariablePtr& d : *dims) fetched.push_back(d);
    }
    auto f = function(args, fetched);
    ASSERT_TRUE(f.ok()) << f.status();
    auto result = (*f)(values);
    ASSERT_TRUE(result.ok()) << result.status();
    for (size_t o = 0; o < n_out; ++o, at += 3) {
      SCOPED_TRACE(absl::StrCat("output ", o));
      const Tensor& y = (*result)[o];
      EXPECT_EQ(DTypeName(y.dtype()), c[at]);
      EXPECT_EQ(DTypeName(outs[o].dtype()), c[at]);
      EXPECT_EQ(y.shape(), testing::ParseShape(c[at + 1]));
      ExpectSameElements(y, testing::MakeTensor(c[at], c[at + 1], c[at + 2]));
      for (int d = 0; d < y.ndim(); ++d) {
        EXPECT_EQ(ScalarInt((*result)[first_dim[o] + d]), y.shape()[d]) << "dim " << d;
      }
    }
    ++cases;
  }
  EXPECT_GT(cases, 150);
}

// Each op's printed name (Aesara's), its class, and the op the registry makes from its wire
// attributes, equal to it.
TEST(ArrayOpsTest, NamesAndWireIdentity) {
  const Var x = dvector("x"), m = dmatrix("m"), i = lvector("i");
  const Var dims = constant(*Tensor::Of<int64_t>(DType::kInt64, {2}, {2, 3}));
  const std::vector<std::pair<Var, std::string>> cases = {
      {searchsorted(x, x), "SearchsortedOp{side='left'}"},
      {searchsorted(x, x, "right", i), "SearchsortedOp{side='right'}"},
      {unique(m, true, true, true, 0)[0],
       "Unique{return_index=True, return_inverse=True, return_counts=True, axis=0}"},
      {unique(m)[0],
       "Unique{return_index=False, return_inverse=False, return_counts=False, axis=None}"},
      {unravel_index(i, dims)[0], "UnravelIndex{order='C'}"},
      {ravel_multi_index({i, i}, dims, "wrap", "F"), "RavelMultiIndex{mode='wrap', order='F'}"},
      {fill_diagonal_offset(m, dscalar(), lscalar()), "FillDiagonalOffset"},
      {broadcast_to(x, {lscalar(), lscalar()}), "BroadcastTo"},
      {tri(lscalar(), lscalar(), lscalar()), "Tri{dtype='float64'}"},
      {diagonal(m), "ExtractDiag{offset=0, axis1=0, axis2=1, view=False}"},
      {diag(x), "AllocDiag{offset=0, axis1=0, axis2=1}"},
      {choose(i, m), "Choose{mode='raise'}"},
      {topk_and_argtopk(x, lscalar())[0], "TopKOp{axis=-1, sorted=False}"},
  };
  for (const auto& [v, name] : cases) {
    ASSERT_TRUE(v.ok()) << name << ": " << v.status();
    const Op& op = v->owner()->op();
    EXPECT_EQ(op.Name(), name);
    absl::StatusOr<OpPtr> again = MakeOp(op.type_name(), op.Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == op) << name;
    EXPECT_EQ((*again)->Hash(), op.Hash());
  }
}

// Types as Aesara's make_node builds them.
TEST(ArrayOpsTest, OutputTypes) {
  const Var m = dmatrix("m"), x = dvector("x");
  EXPECT_EQ(searchsorted(x, m)->type()->ToString(), "TensorType(int64, (?, ?))");
  const std::vector<Var> u =
      unique(tensor(DType::kFloat32, {1, std::nullopt, 1}), true, true, true, 1);
  ASSERT_EQ(u.size(), 4u);
  EXPECT_EQ(u[0]->type()->ToString(), "TensorType(float32, (1, ?, 1))");
  for (int k = 1; k < 4; ++k) EXPECT_EQ(u[k]->type()->ToString(), "TensorType(int64, (?,))");
  EXPECT_EQ(unique(m)[0]->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(broadcast_to(x, {constant(int64_t{3}), constant(int64_t{4})})->type()->ToString(),
            "TensorType(float64, (3, 4))");
  EXPECT_EQ(broadcast_to(dscalar(), {}).ptr()->owner(), nullptr);  // a scalar stays itself
  EXPECT_EQ(tri(lscalar(), lscalar(), lscalar(), DType::kInt8)->type()->ToString(),
            "TensorType(int8, (?, ?))");
  EXPECT_EQ(diag(m)->type()->ToString(), "TensorType(float64, (?,))");
  EXPECT_EQ(diag(x)->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(choose(lvector(), tensor(DType::kInt32, {3, 1}))->type()->ToString(),
            "TensorType(int32, (?,))");
  EXPECT_EQ(choose(tensor(DType::kInt64, {1}), tensor(DType::kInt32, {3, 1}))->type()->ToString(),
            "TensorType(int32, (1,))");
  const std::vector<Var> tk = topk_and_argtopk(m, lscalar(), 0, false, DType::kInt32);
  EXPECT_EQ(tk[1]->type()->ToString(), "TensorType(int32, (?, ?))");
  // An int val is cast to the matrix's dtype, as FillDiagonal does.
  const Var f = fill_diagonal_offset(m, iscalar(), lscalar());
  EXPECT_EQ(f->owner()->inputs()[1]->owner()->op().Name(), "Elemwise{Cast{float64}}");
}

}  // namespace
}  // namespace kiln
