// verify_grad on every differentiable op of the op library at random float64 points, including
// broadcast, keepdims and strided (non-contiguous) inputs.
#include <functional>
#include <random>
#include <string>

#include "core/kiln.h"
#include "gtest/gtest.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

using Fn = std::function<Var(const std::vector<Var>&)>;

// Uniform values in [lo, hi), seeded by the shape and bounds so every run sees the same point.
Tensor Rand(Shape shape, double lo = -2, double hi = 2, uint64_t seed = 1) {
  const auto bounds = static_cast<uint64_t>(static_cast<int64_t>(lo * 100 + hi));
  std::mt19937_64 rng(seed + ShapeSize(shape) * 7919 + bounds);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(ShapeSize(shape));
  for (double& e : v) e = u(rng);
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

Tensor Values(Shape shape, std::vector<double> v) {
  return *Tensor::FromValues<double>(DType::kFloat64, std::move(shape), v);
}

void ExpectGradOk(const std::string& what, const Fn& fn, const std::vector<Tensor>& pt) {
  const absl::Status s = verify_grad(fn, pt);
  EXPECT_TRUE(s.ok()) << what << ": " << s;
}

struct UnaryCase {
  std::string name;
  Var (*fn)(const Var&);
  double lo, hi;
};

TEST(OpGradsTest, UnaryElemwise) {
  const std::vector<UnaryCase> cases = {
      {"neg", neg, -2, 2},
      {"sqr", sqr, -2, 2},
      {"exp", exp, -2, 2},
      {"exp2", exp2, -2, 2},
      {"expm1", expm1, -2, 2},
      {"sin", sin, -2, 2},
      {"cos", cos, -2, 2},
      {"tan", tan, -1, 1},
      {"arctan", arctan, -2, 2},
      {"sinh", sinh, -2, 2},
      {"cosh", cosh, -2, 2},
      {"tanh", tanh, -2, 2},
      {"arcsinh", arcsinh, -2, 2},
      {"erf", erf, -2, 2},
      {"erfc", erfc, -2, 2},
      {"erfcx", erfcx, 0.1, 2},
      {"sigmoid", sigmoid, -3, 3},
      {"softplus", softplus, -3, 3},
      {"deg2rad", deg2rad, -2, 2},
      {"rad2deg", rad2deg, -2, 2},
      {"identity", identity, -2, 2},
      {"abs", abs, 0.2, 2},
      {"log", log, 0.5, 3},
      {"log2", log2, 0.5, 3},
      {"log10", log10, 0.5, 3},
      {"log1p", log1p, 0.5, 3},
      {"sqrt", sqrt, 0.5, 3},
      {"reciprocal", reciprocal, 0.5, 3},
      {"gamma", gamma, 0.5, 3},
      {"gammaln", gammaln, 0.5, 3},
      {"arcsin", arcsin, -0.9, 0.9},
      {"arccos", arccos, -0.9, 0.9},
      {"arctanh", arctanh, -0.9, 0.9},
      {"erfinv", erfinv, -0.9, 0.9},
      {"erfcinv", erfcinv, 0.1, 1.9},
      {"arccosh", arccosh, 1.5, 3},
      {"log1mexp", log1mexp, -3, -0.1},
      {"j0", j0, -8, 8},
      {"j1", j1, -8, 8},
      {"i0", i0, -8, 8},
      {"i1", i1, -8, 8},
  };
  for (const UnaryCase& c : cases) {
    ExpectGradOk(c.name, [&](const std::vector<Var>& in) { return c.fn(in[0]); },
                 {Rand({3, 4}, c.lo, c.hi)});
  }
  // j1's gradient at 0 is its limit, 1/2.
  ExpectGradOk("j1 at 0", [](const std::vector<Var>& in) { return j1(in[0]); },
               {Values({3}, {0.0, -1e-9, 1e-9})});
  // So is i1's, and past the series' end (|x| = 25) its asymptotic expansion takes over.
  ExpectGradOk("i1 at 0", [](const std::vector<Var>& in) { return i1(in[0]); },
               {Values({3}, {0.0, -1e-9, 1e-9})});
  ExpectGradOk("i0, i1 at 25", [](const std::vector<Var>& in) { return i0(in[0]) + i1(in[0]); },
               {Values({3}, {24.9, 25.1, -26.0})});
  // Negative abs inputs, and a strided (non-contiguous) input.
  ExpectGradOk("abs<0", [](const std::vector<Var>& in) { return abs(in[0]); },
               {Rand({5}, -2, -0.2)});
  ExpectGradOk("exp strided", [](const std::vector<Var>& in) { return exp(in[0]); },
               {testing::NonContiguous(Rand({3, 4}))});
}

TEST(OpGradsTest, BinaryAndTernaryElemwise) {
  auto two = [](Var (*f)(const Var&, const Var&)) {
    return [f](const std::vector<Var>& in) { return f(in[0], in[1]); };
  };
  ExpectGradOk("add", two(add), {Rand({3, 4}), Rand({3, 4}, -1, 1)});
  ExpectGradOk("sub", two(sub), {Rand({3, 4}), Rand({3, 4}, -1, 1)});
  ExpectGradOk("mul", two(mul), {Rand({3, 4}), Rand({3, 4}, -1, 1)});
  ExpectGradOk("true_div", two(true_div), {Rand({3, 4}), Rand({3, 4}, 0.5, 2)});
  ExpectGradOk("pow", two(pow), {Rand({3, 4}, 0.5, 2), Rand({3, 4}, -1.5, 1.5)});
  ExpectGradOk("maximum", two(maximum), {Rand({6}, -2, 0), Rand({6}, 0.1, 2)});
  ExpectGradOk("maximum'", two(maximum), {Rand({6}, 0.1, 2), Rand({6}, -2, 0)});
  ExpectGradOk("minimum", two(minimum), {Rand({6}, -2, 0), Rand({6}, 0.1, 2)});
  ExpectGradOk("arctan2", two(arctan2), {Rand({3, 4}), Rand({3, 4}, 0.5, 2)});
  ExpectGradOk("mod", two(mod), {Rand({5}, 0.1, 0.9), Rand({5}, 1.1, 2)});
  ExpectGradOk("second", [](const std::vector<Var>& in) { return second(in[0], in[1]) * in[1]; },
               {Rand({3, 4}), Rand({3, 4})});
  ExpectGradOk("mul of x by itself",
               [](const std::vector<Var>& in) { return in[0] * in[0] * in[0]; }, {Rand({4})});
  ExpectGradOk("clip", [](const std::vector<Var>& in) { return clip(in[0], in[1], in[2]); },
               {Values({4}, {-1.5, -0.2, 0.3, 1.7}), Values({}, {-0.5}), Values({}, {0.5})});
  ExpectGradOk("switch",
               [](const std::vector<Var>& in) { return switch_(in[0] > 0.0, in[0] * 3.0, in[1]); },
               {Values({4}, {-1.5, -0.2, 0.3, 1.7}), Rand({4})});
  // Broadcasting: row, column, scalar and lower-rank operands, summed back.
  ExpectGradOk("add row", two(add), {Rand({3, 4}), Rand({1, 4})});
  ExpectGradOk("mul col", two(mul), {Rand({3, 4}), Rand({3, 1})});
  ExpectGradOk("mul vector", two(mul), {Rand({3, 4}), Rand({4})});
  ExpectGradOk("div scalar", two(true_div), {Rand({2, 3}), Rand({}, 0.5, 2)});
  ExpectGradOk("pow broadcast both", two(pow), {Rand({3, 1}, 0.5, 2), Rand({1, 4})});
}

TEST(OpGradsTest, Reductions) {
  auto one = [](std::function<Var(const Var&)> f) {
    return [f](const std::vector<Var>& in) { return f(in[0]); };
  };
  const Tensor x = Rand({2, 3, 4});
  ExpectGradOk("sum", one([](const Var& v) { return sum(v); }), {x});
  ExpectGradOk("sum 1", one([](const Var& v) { return sum(v, 1); }), {x});
  ExpectGradOk("sum keepdims", one([](const Var& v) { return sum(v, {0, 2}, true); }), {x});
  ExpectGradOk("sum strided", one([](const Var& v) { return sum(v, -1); }),
               {testing::NonContiguous(x)});
  ExpectGradOk("prod", one([](const Var& v) { return prod(v, 1); }), {Rand({3, 4}, 0.5, 1.5)});
  ExpectGradOk("prod one zero", one([](const Var& v) { return prod(v, 0); }),
               {Values({3, 2}, {0.0, 2.0, 1.5, 0.0, -2.0, 0.0})});
  ExpectGradOk("max", one([](const Var& v) { return max(v, 1); }), {x});
  ExpectGradOk("min keepdims", one([](const Var& v) { return min(v, {0, 2}, true); }), {x});
  ExpectGradOk("max_and_argmax", one([](const Var& v) { return max_and_argmax(v, 0)[0]; }), {x});
  ExpectGradOk("mean", one([](const Var& v) { return mean(v, {1, 2}); }), {x});
  ExpectGradOk("var", one([](const Var& v) { return var(v, 1, true); }), {x});
  ExpectGradOk("std", one([](const Var& v) { return std(v, 2); }), {x});
  ExpectGradOk("cumsum", one([](const Var& v) { return cumsum(v, 1); }), {x});
  ExpectGradOk("cumsum flat", one([](const Var& v) { return cumsum(v); }), {x});
  ExpectGradOk("cumprod", one([](const Var& v) { return cumprod(v, -1); }),
               {Rand({3, 4}, 0.5, 1.5)});
  ExpectGradOk("cumprod flat", one([](const Var& v) { return cumprod(v); }),
               {Rand({2, 3}, 0.5, 1.5)});
  ExpectGradOk("logsumexp", one([](const Var& v) { return logsumexp(v, 1); }), {x});
}

TEST(OpGradsTest, ShapeOps) {
  auto one = [](std::function<Var(const Var&)> f) {
    return [f](const std::vector<Var>& in) { return f(in[0]); };
  };
  const Tensor x = Rand({2, 3, 4});
  ExpectGradOk("reshape", one([](const Var& v) { return reshape(v, {4, -1}); }), {x});
  ExpectGradOk("flatten", one([](const Var& v) { return flatten(v, 2) * 2.0; }), {x});
  ExpectGradOk("transpose", one([](const Var& v) { return transpose(v); }), {x});
  ExpectGradOk("dimshuffle", one([](const Var& v) { return dimshuffle(v, {2, kX, 0, 1}); }), {x});
  ExpectGradOk("expand_dims", one([](const Var& v) { return expand_dims(v, 1); }), {x});
  ExpectGradOk("squeeze", one([](const Var& v) { return squeeze(v); }), {Rand({3, 1, 2})});
  ExpectGradOk("specify_shape", one([](const Var& v) {
                 return specify_shape(v, {2, 3, 4}) * v;
               }),
               {x});
  ExpectGradOk("make_vector",
               [](const std::vector<Var>& in) {
                 return make_vector({in[0], in[1] * 2.0}, DType::kFloat64);
               },
               {Rand({}), Rand({})});
}

TEST(OpGradsTest, LinearAlgebra) {
  auto two = [](Var (*f)(const Var&, const Var&)) {
    return [f](const std::vector<Var>& in) { return f(in[0], in[1]); };
  };
  ExpectGradOk("dot vv", two(dot), {Rand({4}), Rand({4}, -1, 1)});
  ExpectGradOk("dot mv", two(dot), {Rand({3, 4}), Rand({4}, -1, 1)});
  ExpectGradOk("dot vm", two(dot), {Rand({3}), Rand({3, 4}, -1, 1)});
  ExpectGradOk("dot mm", two(dot), {Rand({3, 4}), Rand({4, 2}, -1, 1)});
  ExpectGradOk("dot strided", two(dot),
               {testing::NonContiguous(Rand({3, 4})), testing::NonContiguous(Rand({4, 2}))});
  ExpectGradOk("matmul batch", two(matmul), {Rand({2, 3, 4}), Rand({4, 5}, -1, 1)});
  ExpectGradOk("matmul broadcast batch", two(matmul), {Rand({2, 1, 3, 4}), Rand({3, 4, 2}, -1, 1)});
  ExpectGradOk("matmul vector left", two(matmul), {Rand({4}), Rand({2, 4, 3}, -1, 1)});
  ExpectGradOk("matmul vector right", two(matmul), {Rand({2, 3, 4}), Rand({4}, -1, 1)});
  ExpectGradOk("matmul vv", two(matmul), {Rand({4}), Rand({4}, -1, 1)});
  ExpectGradOk("tensordot", [](const std::vector<Var>& in) { return tensordot(in[0], in[1], 1); },
               {Rand({2, 3}), Rand({3, 4}, -1, 1)});
  ExpectGradOk("outer", two(outer), {Rand({3}), Rand({4}, -1, 1)});
  ExpectGradOk("dot22", two(dot22), {Rand({3, 4}), Rand({4, 2}, -1, 1)});
  ExpectGradOk("gemm",
               [](const std::vector<Var>& in) { return gemm(in[0], in[1], in[2], in[3], in[4]); },
               {Rand({3, 2}), Rand({}), Rand({3, 4}), Rand({4, 2}), Rand({})});
  ExpectGradOk("gemv",
               [](const std::vector<Var>& in) { return gemv(in[0], in[1], in[2], in[3], in[4]); },
               {Rand({3}), Rand({}), Rand({3, 4}), Rand({4}), Rand({})});
}

TEST(OpGradsTest, Indexing) {
  const Tensor x = Rand({5, 4});
  auto one = [](std::function<Var(const Var&)> f) {
    return [f](const std::vector<Var>& in) { return f(in[0]); };
  };
  ExpectGradOk("subtensor slices", one([](const Var& v) {
                 return subtensor(v, {Slice{4, 0, -2}, Slice{1, std::nullopt}});
               }),
               {x});
  ExpectGradOk("subtensor int", one([](const Var& v) { return subtensor(v, {-2}); }), {x});
  ExpectGradOk("subtensor symbolic bound", one([](const Var& v) {
                 return subtensor(v, {Slice{shape_i(v, 0) - 3, std::nullopt}});
               }),
               {x});
  ExpectGradOk("set_subtensor",
               [](const std::vector<Var>& in) {
                 return set_subtensor(subtensor(in[0], {Slice{1, 3}}), in[1]);
               },
               {x, Rand({2, 4})});
  ExpectGradOk(
      "inc_subtensor broadcast",
      [](const std::vector<Var>& in) {
        return inc_subtensor(subtensor(in[0], {Slice{std::nullopt, std::nullopt, 2}}), in[1]);
      },
      {x, Rand({1, 4})});
  const Var idx = constant(*Tensor::Of<int64_t>(DType::kInt64, {4}, {3, 0, 3, -1}));
  ExpectGradOk("take repeated", [&](const std::vector<Var>& in) { return take(in[0], idx); }, {x});
  ExpectGradOk("advanced inc repeated",
               [&](const std::vector<Var>& in) { return inc_subtensor(take(in[0], idx), in[1]); },
               {x, Rand({4, 4})});
  const Var distinct = constant(*Tensor::Of<int64_t>(DType::kInt64, {2}, {1, 3}));
  ExpectGradOk(
      "advanced set",
      [&](const std::vector<Var>& in) { return set_subtensor(take(in[0], distinct), in[1]); },
      {x, Rand({4})});
}

TEST(OpGradsTest, Building) {
  ExpectGradOk(
      "alloc",
      [](const std::vector<Var>& in) {
        return alloc(in[0], {constant(int64_t{2}), constant(int64_t{3}), shape_i(in[0], 1)});
      },
      {Rand({1, 4})});
  ExpectGradOk("concatenate",
               [](const std::vector<Var>& in) {
                 return concatenate({in[0], in[1] * 2.0, in[0]}, 1);
               },
               {Rand({2, 3}), Rand({2, 2})});
  ExpectGradOk("stack",
               [](const std::vector<Var>& in) {
                 return stack({in[0], in[1]}, 1);
               },
               {Rand({3}), Rand({3})});
  ExpectGradOk("split",
               [](const std::vector<Var>& in) {
                 std::vector<Var> parts = split(in[0], {1, 3}, 0);
                 return parts[1] * 2.0;
               },
               {Rand({4, 2})});
  ExpectGradOk(
      "arange of a float start",
      [](const std::vector<Var>& in) { return arange(in[0], constant(5.0), constant(1.5)) * 1.0; },
      {Values({}, {0.25})});
}

TEST(OpGradsTest, NeuralNetworkAndSorting) {
  auto one = [](std::function<Var(const Var&)> f) {
    return [f](const std::vector<Var>& in) { return f(in[0]); };
  };
  const Tensor x = Rand({3, 4});
  ExpectGradOk("softmax", one([](const Var& v) { return softmax(v); }), {x});
  ExpectGradOk("softmax axis 0", one([](const Var& v) { return softmax(v, 0); }), {x});
  ExpectGradOk("softmax all", one([](const Var& v) { return softmax(v, std::nullopt); }), {x});
  ExpectGradOk("log_softmax", one([](const Var& v) { return log_softmax(v); }), {x});
  ExpectGradOk("relu", one([](const Var& v) { return relu(v); }),
               {Values({4}, {-1.5, -0.2, 0.3, 1.7})});
  ExpectGradOk("leaky relu", one([](const Var& v) { return relu(v, 0.1); }),
               {Values({4}, {-1.5, -0.2, 0.3, 1.7})});
  ExpectGradOk(
      "binary_crossentropy",
      [](const std::vector<Var>& in) { return binary_crossentropy(sigmoid(in[0]), in[1]); },
      {x, Rand({3, 4}, 0, 1)});
  ExpectGradOk("categorical_crossentropy",
               [](const std::vector<Var>& in) {
                 return categorical_crossentropy(softmax(in[0]), softmax(in[1]));
               },
               {x, Rand({3, 4})});
  const Var labels = constant(*Tensor::Of<int64_t>(DType::kInt64, {3}, {2, 0, 3}));
  ExpectGradOk(
      "categorical_crossentropy labels",
      [&](const std::vector<Var>& in) { return categorical_crossentropy(softmax(in[0]), labels); },
      {x});
  ExpectGradOk("sort", one([](const Var& v) { return sort(v); }), {x});
  ExpectGradOk("sort axis 0", one([](const Var& v) { return sort(v, 0); }), {x});
  ExpectGradOk("sort 3-d axis 1", one([](const Var& v) { return sort(v, 1); }), {Rand({2, 3, 4})});
  ExpectGradOk("sort flat", one([](const Var& v) { return sort(v, std::nullopt); }), {x});
}

}  // namespace
}  // namespace kiln
