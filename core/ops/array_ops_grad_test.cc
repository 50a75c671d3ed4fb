// The array ops' gradients by finite differences, and their errors: bad types when building,
// bad values and hostile sizes when running (refused before anything is allocated).
#include <gtest/gtest.h>

#include <numeric>

#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/broadcast_to.h"
#include "core/ops/diagonal.h"
#include "core/ops/ravel_index.h"
#include "core/ops/searchsorted.h"
#include "core/ops/topk.h"
#include "core/ops/unique.h"

namespace kiln {
namespace {

// A float64 tensor of `shape` with distinct values (no ties for topk's finite differences).
Tensor Ramp(const Shape& shape, double scale = 0.37) {
  std::vector<double> v(ShapeSize(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(1.3 * static_cast<double>(i) + 0.2) * scale * 7;
  return *Tensor::FromValues<double>(DType::kFloat64, shape, v);
}

Tensor Int(int64_t v) { return *Tensor::Of<int64_t>(DType::kInt64, {}, {v}); }

Tensor Ints(std::initializer_list<int64_t> v) {
  return *Tensor::Of<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

// The error of running fun's graph on `values` (inputs typed like them).
absl::Status RunError(const std::function<Var(const std::vector<Var>&)>& fun,
                      const std::vector<Tensor>& values) {
  std::vector<Var> in;
  for (size_t i = 0; i < values.size(); ++i) {
    in.push_back(tensor(values[i].dtype(), StaticShape(values[i].ndim()), ""));
  }
  const Var out = fun(in);
  if (!out.ok()) return out.status();
  auto f = function(in, {out});
  if (!f.ok()) return f.status();
  return (*f)(values).status();
}

TEST(ArrayOpsGradTest, ExtractDiagAndAllocDiag) {
  for (int64_t k : {0, 1, -1, 3, -2}) {
    SCOPED_TRACE(k);
    for (const Shape& shape : {Shape{3, 3}, Shape{2, 5}, Shape{5, 2}}) {
      EXPECT_TRUE(
          verify_grad([k](const std::vector<Var>& in) { return diagonal(in[0], k); }, {Ramp(shape)})
              .ok());
    }
    EXPECT_TRUE(
        verify_grad([k](const std::vector<Var>& in) { return diag(in[0], k); }, {Ramp({4})}).ok());
  }
  // A batch of diagonals laid at axes (2, 0).
  const OpPtr batched = std::make_shared<AllocDiag>(AllocDiagAttrs{1, 2, 0});
  const absl::Status s = verify_grad(batched, {Ramp({2, 3})});
  EXPECT_TRUE(s.ok()) << s;
  // Aesara's ExtractDiag gradient is for matrices only.
  const Var t = dtensor3("t");
  const Var g = grad(sum(diagonal(t)), t);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("Gradient of ExtractDiag only works for matrices."),
            std::string::npos)
      << g.status();
}

TEST(ArrayOpsGradTest, FillDiagonalOffset) {
  for (int64_t k : {0, 2, -1, -4, 7}) {
    for (const Shape& shape : {Shape{3, 3}, Shape{5, 3}, Shape{2, 5}}) {
      SCOPED_TRACE(absl::StrCat(k, " ", ShapeToString(shape)));
      const absl::Status s = verify_grad(
          [k](const std::vector<Var>& in) {
            return fill_diagonal_offset(in[0], in[1], constant(k));
          },
          {Ramp(shape), *Tensor::Of<double>(DType::kFloat64, {}, {0.5})});
      EXPECT_TRUE(s.ok()) << s;
    }
  }
  const Var m = dmatrix("m"), v = dscalar("v"), k = lscalar("k");
  const Var g = grad(sum(fill_diagonal_offset(m, v, k)), k);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("fill_diagonal_offset(a,val,offset+eps) is undefined"),
            std::string::npos)
      << g.status();
}

TEST(ArrayOpsGradTest, BroadcastTo) {
  const absl::Status s1 = verify_grad(
      [](const std::vector<Var>& in) {
        return broadcast_to(in[0],
                            {constant(int64_t{2}), constant(int64_t{3}), constant(int64_t{4})});
      },
      {Ramp({3, 4})});
  EXPECT_TRUE(s1.ok()) << s1;
  // A static broadcastable dim is summed over (keeping it).
  const absl::Status s2 = verify_grad(
      [](const std::vector<Var>& in) {
        return broadcast_to(specify_shape(in[0], {1, 4}),
                            {constant(int64_t{3}), constant(int64_t{4})});
      },
      {Ramp({1, 4})});
  EXPECT_TRUE(s2.ok()) << s2;
}

TEST(ArrayOpsGradTest, TopK) {
  for (auto [shape, axis, k] :
       {std::tuple{Shape{6}, 0, 2}, std::tuple{Shape{6}, 0, -3}, std::tuple{Shape{3, 4}, 0, 2},
        std::tuple{Shape{3, 4}, 1, -1}, std::tuple{Shape{2, 3, 4}, 1, 3},
        std::tuple{Shape{2, 3, 4}, 2, 2}}) {
    SCOPED_TRACE(absl::StrCat(ShapeToString(shape), " axis ", axis, " k ", k));
    const absl::Status s = verify_grad(
        [axis = axis, k = k](const std::vector<Var>& in) {
          return topk_and_argtopk(in[0], constant(int64_t{k}), axis)[0];
        },
        {Ramp(shape)});
    EXPECT_TRUE(s.ok()) << s;
  }
}

// searchsorted's gradients are Aesara's zeros; unique's and the index ops' inputs are
// disconnected (their outputs are integers or piecewise constant).
TEST(ArrayOpsGradTest, ZeroAndDisconnectedGradients) {
  const Var x = dvector("x"), v = dvector("v");
  const Var cost = sum(cast(searchsorted(x, v), DType::kFloat64) * v);
  const Var gx = grad(cost, x);
  ASSERT_TRUE(gx.ok()) << gx.status();
  auto f = function({x, v}, {gx, grad(cost, v)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto r = (*f)({Ramp({3}), Ramp({2})});
  ASSERT_TRUE(r.ok()) << r.status();
  for (double e : std::vector<double>((*r)[0].data<double>(), (*r)[0].data<double>() + 3)) {
    EXPECT_EQ(e, 0.0);
  }
  const Var u = sum(unique(x)[0]);
  EXPECT_FALSE(grad(u, x).ok());
}

TEST(ArrayOpsGradTest, BuildErrors) {
  const Var m = dmatrix("m"), x = dvector("x"), i = lvector("i");
  EXPECT_EQ(std::string(searchsorted(m, x).status().message()),
            "SearchsortedOp{side='left'}: input 0 has type TensorType(float64, (?, ?)) but a "
            "vector (x) is "
            "needed");
  EXPECT_EQ(std::string(searchsorted(x, x, "middle").status().message()),
            "SearchsortedOp: 'middle' is an invalid value for keyword 'side'");
  EXPECT_EQ(std::string(searchsorted(x, x, "left", x).status().message()),
            "SearchsortedOp{side='left'}: input 2 has type TensorType(float64, (?,)) but an "
            "integer vector "
            "(sorter) is needed");
  EXPECT_EQ(std::string(unique(m, false, false, false, 2)[0].status().message()),
            "Unique{return_index=False, return_inverse=False, return_counts=False, axis=2}: "
            "Unique axis 2 is outside of input ndim = 2");
  EXPECT_EQ(std::string(unravel_index(i, lvector("d"))[0].status().message()),
            "UnravelIndex{order='C'}: input 1 (dims) has type TensorType(int64, (?,)): its length "
            "must be "
            "known");
  EXPECT_EQ(
      std::string(unravel_index(x, constant(Ints({2, 3})))[0].status().message()),
      "UnravelIndex{order='C'}: input 0 has type TensorType(float64, (?,)) but an integer tensor "
      "(indices) is needed");
  EXPECT_EQ(std::string(ravel_multi_index({i}, constant(Ints({2, 3}))).status().message()),
            "RavelMultiIndex{mode='raise', order='C'}: dims has 2 entries: parameter multi_index "
            "must be a sequence of "
            "length 2");
  EXPECT_EQ(
      std::string(ravel_multi_index({i, i}, constant(Ints({2, 3})), "bounce").status().message()),
      "RavelMultiIndex: attribute 'mode' must be 'raise', 'wrap' or 'clip', not 'bounce'");
  EXPECT_EQ(std::string(diagonal(x).status().message()),
            "ExtractDiag{offset=0, axis1=0, axis2=1, view=False}: input 0 has type "
            "TensorType(float64, (?,)) but ExtractDiag needs an "
            "input with 2 or more dimensions");
  EXPECT_EQ(
      std::string(diagonal(m, 0, 1, 1).status().message()),
      "ExtractDiag{offset=0, axis1=1, axis2=1, view=False}: axis1 and axis2 cannot be the same");
  EXPECT_EQ(std::string(diagonal(m, 0, 0, 2).status().message()),
            "ExtractDiag{offset=0, axis1=0, axis2=2, view=False}: axis1 0 or axis2 2 is out of "
            "bounds for a result of 2 dims from "
            "TensorType(float64, (?, ?))");
  EXPECT_EQ(std::string(fill_diagonal_offset(dtensor3(), dscalar(), lscalar()).status().message()),
            "FillDiagonalOffset: input 0 (a) has type TensorType(float64, (?, ?, ?)): first "
            "parameter must have exactly two dimensions");
  EXPECT_EQ(std::string(fill_diagonal_offset(m, dscalar(), dscalar()).status().message()),
            "FillDiagonalOffset: input 2 (offset) has type TensorType(float64, ()): type of "
            "third parameter must be as integer use aesara.tensor.cast( input, 'int32/int64')");
  EXPECT_EQ(std::string(fill_diagonal_offset(imatrix(), dscalar(), lscalar()).status().message()),
            "FillDiagonalOffset: input 1 (val) has type TensorType(float64, ()) but input 0 (a) "
            "has TensorType(int32, (?, ?)): type of second parameter must be the same as the "
            "first's");
  EXPECT_EQ(std::string(tri(dscalar(), lscalar(), lscalar()).status().message()),
            "Tri{dtype='float64'}: input 0 has type TensorType(float64, ()) but an integer scalar "
            "is needed");
  EXPECT_EQ(std::string(broadcast_to(m, {constant(int64_t{3})}).status().message()),
            "BroadcastTo: input 0 has type TensorType(float64, (?, ?)) but the shape has 1 dims: "
            "a broadcasts to as many dims as it has, or more (at most 64)");
  EXPECT_EQ(std::string(broadcast_to(x, {constant(int64_t{-2})}).status().message()),
            "BroadcastTo: dim 0 is -2: all elements of broadcast shape must be non-negative");
  EXPECT_EQ(
      std::string(
          broadcast_to(tensor(DType::kFloat64, {3}), {constant(int64_t{4})}).status().message()),
      "BroadcastTo: input 0 has type TensorType(float64, (3,)), which does not broadcast "
      "to dim 0 of size 4");
  EXPECT_EQ(std::string(choose(x, m).status().message()),
            "Choose{mode='raise'}: choose first argument must have an [u]int* dtype. Got float64.");
  EXPECT_EQ(std::string(topk_and_argtopk(dscalar(), lscalar())[0].status().message()),
            "TopKOp{axis=-1, sorted=False}: Cannot take scalar as input");
  EXPECT_EQ(std::string(topk_and_argtopk(m, lscalar(), 2)[0].status().message()),
            "TopKOp{axis=2, sorted=False}: \"axis\" parameter out of range, expected integer "
            "within [-2, 1]");
  EXPECT_EQ(std::string(topk_and_argtopk(m, lscalar(), 0, true)[0].status().message()),
            "TopKOp: The sorted parameter is not yet implemented. Use sorted=False for now.");
  EXPECT_EQ(
      std::string(MakeOp("TopKOp", {{"idx_dtype", std::string("float32")}}).status().message()),
      "TopKOp: \"idx_dtype\" parameter must be an integer dtype, got \"float32\"");
  EXPECT_EQ(std::string(MakeOp("Unique", {{"axes", int64_t{1}}}).status().message()),
            "Unique: unknown attribute 'axes'");
}

TEST(ArrayOpsGradTest, RunErrorsAndHostileSizes) {
  const int64_t huge = int64_t{1} << 40;
  // Sizes over the tensor limit (kMaxTensorBytes) refused before allocation.
  EXPECT_NE(RunError([](const std::vector<Var>& in) { return tri(in[0], in[1], in[2]); },
                     {Int(huge), Int(huge), Int(0)})
                .message()
                .find("needs more than"),
            std::string::npos);
  EXPECT_EQ(
      std::string(RunError([](const std::vector<Var>& in) { return tri(in[0], in[1], in[2]); },
                           {Int(-1), Int(2), Int(0)})
                      .message()),
      "Tri{dtype='float64'}: N=-1, M=2: negative dimensions are not allowed");
  EXPECT_NE(RunError(
                [](const std::vector<Var>& in) {
                  return broadcast_to(in[0], {in[1], in[2]});
                },
                {Ramp({2}), Int(huge), Int(1 << 10)})
                .message()
                .find("needs more than"),
            std::string::npos);
  EXPECT_EQ(
      std::string(RunError([](const std::vector<Var>& in) { return broadcast_to(in[0], {in[1]}); },
                           {Ramp({2}), Int(3)})
                      .message()),
      "BroadcastTo: operands could not be broadcast together: input 0 of shape (2,) and "
      "requested shape (3,)");
  EXPECT_NE(RunError([](const std::vector<Var>& in) { return diag(in[0], int64_t{1} << 40); },
                     {Ramp({3})})
                .message()
                .find("needs more than"),
            std::string::npos);
  EXPECT_EQ(std::string(RunError(
                            [](const std::vector<Var>& in) {
                              return unravel_index(
                                  in[0], constant(Ints({int64_t{1} << 40, int64_t{1} << 40})))[0];
                            },
                            {Ints({0})})
                            .message()),
            "UnravelIndex{order='C'}: invalid dims: array size defined by dims is larger than the "
            "maximum "
            "possible size.");
  EXPECT_EQ(std::string(RunError(
                            [](const std::vector<Var>& in) {
                              return unravel_index(in[0], constant(Ints({2, 3})))[0];
                            },
                            {Ints({6})})
                            .message()),
            "UnravelIndex{order='C'}: index 6 is out of bounds for array with size 6");
  EXPECT_EQ(std::string(RunError(
                            [](const std::vector<Var>& in) {
                              return ravel_multi_index({in[0], in[1]}, constant(Ints({2, 3})));
                            },
                            {Ints({2}), Ints({0})})
                            .message()),
            "RavelMultiIndex{mode='raise', order='C'}: index 2 of input 0 is outside dim 2: "
            "invalid entry in coordinates "
            "array");
  EXPECT_EQ(std::string(RunError(
                            [](const std::vector<Var>& in) {
                              return searchsorted(in[0], in[1], "left", in[2]);
                            },
                            {Ramp({3}), Ramp({2}), Ints({0, 1, 3})})
                            .message()),
            "SearchsortedOp{side='left'}: sorter entry 3 at 2 is out of range for x of 3 entries: "
            "Sorter index "
            "out of range.");
  EXPECT_EQ(std::string(RunError([](const std::vector<Var>& in) { return choose(in[0], in[1]); },
                                 {Ints({0, 3}), Ramp({3, 2})})
                            .message()),
            "Choose{mode='raise'}: index 3 for 3 choices: invalid entry in choice array");
  EXPECT_EQ(
      std::string(
          RunError([](const std::vector<Var>& in) { return topk_and_argtopk(in[0], in[1])[0]; },
                   {Ramp({4}), Int(0)})
              .message()),
      "TopKOp{axis=-1, sorted=False}: topk: kth cannot be zero");
  EXPECT_EQ(
      std::string(
          RunError([](const std::vector<Var>& in) { return topk_and_argtopk(in[0], in[1])[0]; },
                   {Ramp({4}), Int(-5)})
              .message()),
      "TopKOp{axis=-1, sorted=False}: topk: kth (-5) cannot be larger than the size of "
      "specified axis 0 (4)");
}

}  // namespace
}  // namespace kiln
