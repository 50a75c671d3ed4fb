// Every op's InferShape, checked as Aesara's _compile_and_check does: the inferred shape graph is
// evaluated beside the op itself on real inputs and must give the shape the kernel produced.
#include "core/ops/shape_infer.h"

#include <gtest/gtest.h>

#include "core/kiln.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// Compiles `out` and its inferred shape over `inputs` and checks they agree on `args`.
void CheckShape(const std::string& what, const std::vector<Var>& inputs, const Var& out,
                const std::vector<Tensor>& args) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(out.ok()) << out.status();
  absl::StatusOr<ShapeVars> dims = infer_shape(out);
  ASSERT_TRUE(dims.ok()) << dims.status();
  std::vector<Var> outputs = {out};
  for (const VariablePtr& d : *dims) outputs.push_back(Var(d));
  auto f = function(inputs, outputs, {.on_unused_input = OnUnusedInput::kIgnore});
  ASSERT_TRUE(f.ok()) << f.status();
  auto values = (*f)(args);
  ASSERT_TRUE(values.ok()) << values.status();
  const Tensor& r = (*values)[0];
  ASSERT_EQ(static_cast<int>(dims->size()), r.ndim());
  for (int d = 0; d < r.ndim(); ++d) {
    const Tensor& dim = (*values)[d + 1];
    EXPECT_EQ(dim.ndim(), 0);
    EXPECT_EQ(dim.dtype(), DType::kInt64);
    EXPECT_EQ(dim.ElementAsDouble(0), static_cast<double>(r.shape()[d])) << "dim " << d;
  }
}

TEST(ShapeInferTest, EveryOpFamily) {
  Var m = dmatrix("m"), v = dvector("v"), c = tensor(DType::kFloat64, {kUnknownDim, 1}, "c");
  Var t = dtensor3("t"), i = lvector("i"), n = lscalar("n");
  const Tensor mv = testing::Filled(DType::kFloat64, {3, 4}, [](int64_t i) { return i % 7 + 0.5; }),
               vv = testing::Filled(DType::kFloat64, {4}, [](int64_t i) { return i % 7 + 0.5; });
  const Tensor cv = testing::Filled(DType::kFloat64, {3, 1}, [](int64_t i) { return i % 7 + 0.5; }),
               tv = testing::Filled(DType::kFloat64, {2, 3, 4},
                                    [](int64_t i) { return i % 7 + 0.5; });
  const Tensor iv = *Tensor::Of<int64_t>(DType::kInt64, {5}, {0, 2, 1, 1, 0});
  const Tensor nv = *Tensor::Of<int64_t>(DType::kInt64, {}, {3});
  const std::vector<Var> in = {m, v, c, t, i, n};
  const std::vector<Tensor> args = {mv, vv, cv, tv, iv, nv};
  auto check = [&](const std::string& what, const Var& out) { CheckShape(what, in, out, args); };

  check("elemwise broadcast", c + v);
  check("elemwise with scalar", exp(m) * 2.0);
  check("dimshuffle", dimshuffle(m, {1, kX, 0}));
  check("shape", shape(t));
  check("shape_i", shape_i(t, 1));
  check("reshape constant", reshape(t, {4, -1}));
  check("reshape symbolic", reshape(t, make_vector({n, constant(int64_t{-1})})));
  check("flatten", flatten(t, 2));
  check("specify_shape", specify_shape(m, {3, kUnknownDim}));
  check("sum axis", sum(t, {0, 2}));
  check("max keepdims", max(t, 1, true));
  check("argmax", argmax(t, -1));
  check("max_and_argmax", max_and_argmax(t, {1})[0]);
  check("cumsum flat", cumsum(t));
  check("cumprod axis", cumprod(t, 1));
  check("mean", mean(m, 0));
  check("dot", dot(m, v));
  check("dot vector", dot(v, v));
  check("matmul batch", matmul(t, dimshuffle(m, {1, 0})));
  check("tensordot", tensordot(t, m, {1}, {0}));
  check("outer", outer(v, v));
  check("alloc", alloc(v, {n, constant(4)}));
  check("zeros", zeros({n, n}));
  check("arange", arange(constant(1), n * 5, constant(2)));
  check("eye", eye(n, constant(2), constant(0)));
  check("concatenate", concatenate({m, m, m}, 1));
  check("stack", stack({v, v}, 0));
  check("split", split(m, {1, 2}, 0)[1]);
  check("subtensor", subtensor(t, {1, Slice{0, 2}}));
  check("subtensor full", subtensor(t, {Slice{}, 2}));
  check("set_subtensor", set_subtensor(subtensor(m, {1}), v));
  check("take", take(m, i));
  check("inc take", inc_subtensor(take(m, i), constant(1.0)));
  check("softmax", softmax(m));
  check("sort flat", sort(m, std::nullopt));
  check("argsort", argsort(m, 0));
  check("logsumexp", logsumexp(t, 2));
}

}  // namespace
}  // namespace kiln
