#include "core/runtime/function.h"

#include <gtest/gtest.h>

#include "core/kiln.h"

namespace kiln {
namespace {

Tensor Vec(std::initializer_list<double> v) {
  return *Tensor::Of<double>(DType::kFloat64, {static_cast<int64_t>(v.size())}, v);
}

TEST(FunctionTest, SeedExample) {
  Var a = vector("a");
  Var b = a + pow(a, 10);
  auto f = function({a}, {b});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({Vec({0, 1, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "[   0.    2. 1026.]");
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat64);
}

TEST(FunctionTest, SeveralOutputsAndConstantOutputs) {
  Var x = dvector("x");
  auto f = function({x}, {x * 2.0, exp(x), x, constant(7)});
  ASSERT_TRUE(f.ok()) << f.status();
  auto out = (*f)({Vec({0, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 4u);
  EXPECT_EQ((*out)[0].ToString(), "[0. 2.]");
  EXPECT_EQ((*out)[1].ToString(), "[1.         2.71828183]");
  EXPECT_EQ((*out)[2].ToString(), "[0. 1.]");
  EXPECT_EQ((*out)[3].ToString(), "7");
}

TEST(FunctionTest, InputsAreFilteredAsAesaraDoes) {
  Var x = dvector("x");
  auto f = function({x}, {x + 1.0});
  ASSERT_TRUE(f.ok());
  // int64 -> float64 is an upcast Aesara accepts.
  auto ok = (*f)({*Tensor::Of<int64_t>(DType::kInt64, {2}, {1, 2})});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].ToString(), "[2. 3.]");

  Var v = fvector("v");
  auto g = function({v}, {v * 2.0});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)({Vec({1})}).status().message(),
            "Bad input argument 0 (v): TensorType(float32, (?,)) cannot store a value of dtype "
            "float64 without risking loss of precision. Cast the value to float32 first.");
  EXPECT_EQ((*f)({Tensor::Zeros(DType::kFloat64, {2, 2})}).status().message(),
            "Bad input argument 0 (x): Wrong number of dimensions: expected 1, got 2 with shape "
            "(2, 2).");
  EXPECT_EQ((*f)({}).status().message(), "the function takes 1 inputs but was called with 0");

  Var s = tensor(DType::kFloat64, {3}, "s");
  auto h = function({s}, {s * 1.0});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)({Vec({1, 2})}).status().message(),
            "Bad input argument 0 (s): The type's shape ((3,)) is not compatible with the data's "
            "((2,))");
}

TEST(FunctionTest, BuildErrorsReachTheCaller) {
  Var bad = tensor(DType::kFloat64, {2}) + tensor(DType::kFloat64, {3});
  EXPECT_EQ(function({}, {bad}).status(), bad.status());
}

TEST(FunctionTest, ResultsNeverAliasArgumentsOrConstants) {
  Var x = dvector("x");
  Var c = constant(*Tensor::Of<double>(DType::kFloat64, {2}, {7, 8}));
  auto f = function({x}, {x, dimshuffle(x, {kX, 0}), c, x});
  ASSERT_TRUE(f.ok());
  Tensor arg = Vec({1, 2});
  auto out = (*f)({arg});
  ASSERT_TRUE(out.ok());
  for (const Tensor& r : *out) EXPECT_FALSE(r.SharesBufferWith(arg));
  EXPECT_FALSE((*out)[2].SharesBufferWith(static_cast<const Constant&>(*c).data()));
  EXPECT_FALSE((*out)[0].SharesBufferWith((*out)[3]));
  (*out)[2].data<double>()[0] = -1;  // writing a result leaves the constant alone
  auto again = (*f)({arg});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[2].ToString(), "[7. 8.]");
}

TEST(FunctionTest, TheUserGraphIsNotMutated) {
  Var x = dvector("x");
  Var y = exp(x) + 1.0;
  const Apply* node = y->owner();
  const Variable* input0 = node->inputs()[0].get();
  auto f = function({x}, {y});
  ASSERT_TRUE(f.ok());
  EXPECT_NE(f->fgraph().outputs()[0].get(), y.ptr().get());
  EXPECT_EQ(node->inputs()[0].get(), input0);
  EXPECT_EQ(f->fgraph().inputs()[0]->name(), "x");
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The fused block executor against the unoptimized graph: many blocks over both threads,
// float32 and float64, a broadcast scalar, and a strided input (which takes the general path).
TEST(FunctionTest, FusedChainsMatchTheUnoptimizedGraph) {
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    Var x = tensor(dtype, {kUnknownDim}, "x");
    Var s = tensor(dtype, {1}, "s");
    Var y = exp(-pow(x, 2)) * sin(x) + log1p(abs(x)) * 0.5 - tanh(x) + sqr(x * s) / (s + 2.0) +
            maximum(x, s) - sigmoid(x) * softplus(x);
    auto fast = function({x, s}, {y});
    auto slow = function({x, s}, {y}, {.mode = "NONE"});
    ASSERT_TRUE(fast.ok() && slow.ok());
    EXPECT_EQ(fast->fgraph().num_nodes(), 1) << "one fused node";
    const int64_t n = 100003;
    std::vector<double> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = -3.0 + 6.0 * ((i * 7919) % 10007) / 10007.0;
    for (bool strided : {false, true}) {
      Tensor xv = Tensor::FromValues<double>(DType::kFloat64, {n}, values)->AsType(dtype);
      if (strided) {
        Tensor twice =
            Tensor::FromValues<double>(DType::kFloat64, {2 * n}, std::vector<double>(2 * n))
                ->AsType(dtype);
        xv = twice.View({n}, {2});
        for (int64_t i = 0; i < n; ++i) {
          if (dtype == DType::kFloat64) {
            twice.data<double>()[2 * i] = values[i];
          } else {
            twice.data<float>()[2 * i] = static_cast<float>(values[i]);
          }
        }
      }
      const Tensor sv = Tensor::Of<double>(DType::kFloat64, {1}, {0.75})->AsType(dtype);
      auto a = (*fast)({xv, sv});
      auto b = (*slow)({xv, sv});
      ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
      const double tol = dtype == DType::kFloat64 ? 1e-12 : 1e-5;
      for (int64_t i = 0; i < n; ++i) {
        const double p = (*a)[0].ElementAsDouble(i), q = (*b)[0].ElementAsDouble(i);
        ASSERT_NEAR(p, q, tol * (1 + std::fabs(q))) << DTypeName(dtype) << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace kiln
