#include "core/compile/function.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>

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
    auto slow = function({x, s}, {y}, {.mode = OptimizerMode::kNone});
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

namespace kiln {
namespace {

Tensor Doubles(std::vector<double> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromValues<double>(DType::kFloat64, {n}, v);
}

TEST(FunctionTest, SharedVariablesAndUpdates) {
  Var w = shared(Doubles({1, 2}), "w");
  Var count = shared(*Tensor::Of<double>(DType::kFloat64, {}, {0}), "count");
  Var x = dvector("x");
  // Both updates read the old values; they are applied together after the outputs.
  auto step = function({x}, {sum(w * x)}, {.updates = {{w, w - x * 0.5}, {count, count + 1.0}}});
  ASSERT_TRUE(step.ok()) << step.status();
  auto out = (*step)({Doubles({2, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "10.0");
  EXPECT_EQ(get_value(w)->ToString(), "[0. 0.]");
  out = (*step)({Doubles({2, 4})});
  EXPECT_EQ((*out)[0].ToString(), "0.0");
  EXPECT_EQ(get_value(w)->ToString(), "[-1. -2.]");
  EXPECT_EQ(get_value(count)->ToString(), "2.0");
  ASSERT_TRUE(set_value(w, Doubles({3, 3})).ok());
  EXPECT_EQ((*(*step)({Doubles({1, 1})}))[0].ToString(), "6.0");
  // A function without updates reads the current value.
  auto read = function({}, {w * 2.0});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ((*(*read)({}))[0].ToString(), "[5. 5.]");
  EXPECT_EQ(set_value(w, Doubles({1})).ok(), true);  // the shape may change, not the rank
  EXPECT_FALSE(set_value(w, *Tensor::Of<double>(DType::kFloat64, {}, {1})).ok());
  EXPECT_EQ(function({x}, {x}, {.updates = {{x, x * 2.0}}}).status().message(),
            "update of x: only shared variables can be updated");
  // A shared variable that only an update writes (nothing reads it): accepted, as in Aesara.
  Var last = shared(Doubles({0, 0}), "last");
  auto keep = function({x}, {sum(x)}, {.updates = {{last, x * 2.0}}});
  ASSERT_TRUE(keep.ok()) << keep.status();
  EXPECT_EQ((*(*keep)({Doubles({1, 2})}))[0].ToString(), "3.0");
  EXPECT_EQ(get_value(last)->ToString(), "[2. 4.]");
  auto listed = function({x, last}, {sum(x)}, {.updates = {{last, x * 3.0}}});
  ASSERT_TRUE(listed.ok()) << listed.status();
}

TEST(FunctionTest, UpdatesAreNeverSeenHalfDone) {
  // Two shared values updated together: a concurrent reader always sees them equal.
  Var a = shared(*Tensor::Of<double>(DType::kFloat64, {}, {0}), "a");
  Var b = shared(*Tensor::Of<double>(DType::kFloat64, {}, {0}), "b");
  auto bump = function({}, {}, {.updates = {{a, a + 1.0}, {b, b + 1.0}}});
  auto diff = function({}, {a - b}, {.mode = OptimizerMode::kNone});
  ASSERT_TRUE(bump.ok() && diff.ok());
  std::thread writer([&] {
    for (int i = 0; i < 2000; ++i) ASSERT_TRUE((*bump)({}).ok());
  });
  for (int i = 0; i < 2000; ++i) EXPECT_EQ((*(*diff)({}))[0].ElementAsDouble(0), 0.0);
  writer.join();
  EXPECT_EQ(get_value(a)->ElementAsDouble(0), 2000.0);
}

TEST(FunctionTest, NanGuardNamesTheFirstBadNode) {
  Var x = dvector("x");
  auto f =
      function({x}, {exp(log(x) * 2.0) + 1.0}, {.mode = OptimizerMode::kNone, .check = CheckMode::kNanGuard});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)({Doubles({1, 2})}).ok());
  EXPECT_EQ((*f)({Doubles({1, -2})}).status().message(),
            "NanGuardMode: output 0 of Elemwise{log,no_inplace}(x) holds nan at flat index 1");
}

TEST(FunctionTest, DebugModeComparesWithTheUnoptimizedGraph) {
  Var x = dvector("x"), y = dvector("y");
  auto f = function({x, y}, {x * y / y + 1.0}, {.check = CheckMode::kDebug});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)({Doubles({1, 2}), Doubles({3, 4})}).ok());
  // y = 0: the optimized x*y/y -> x gives x, the unoptimized graph nan; debug mode says so.
  const absl::Status s = (*f)({Doubles({1, 2}), Doubles({0, 4})}).status();
  EXPECT_NE(s.message().find("DebugMode: output 0 of the optimized graph"), std::string::npos) << s;
}

TEST(FunctionTest, ProfileAndPeakMemory) {
  Var x = dmatrix("x");
  auto f = function({x}, {sum(exp(x) * 2.0) + sum(sin(x))}, {.profile = true});
  ASSERT_TRUE(f.ok());
  const Tensor big = Tensor::Zeros(DType::kFloat64, {100, 100});
  EXPECT_EQ(f->mean_call_seconds(), std::numeric_limits<double>::infinity());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*f)({big}).ok());
  const FunctionStats s = f->stats();
  EXPECT_EQ(s.calls, 3);
  EXPECT_DOUBLE_EQ(f->mean_call_seconds(), s.call_seconds / 3);
  double node_total = 0;
  for (size_t n = 0; n < s.node_calls.size(); ++n) {
    EXPECT_EQ(s.node_calls[n], 3);
    node_total += s.node_seconds[n];
  }
  EXPECT_NEAR(node_total, s.thunk_seconds, 1e-9);
  EXPECT_LE(s.thunk_seconds, s.call_seconds);
  // Two 100x100 intermediates at most are alive at once, plus the scalar outputs.
  EXPECT_GE(s.peak_bytes, 80000);
  EXPECT_LE(s.peak_bytes, 2 * 80000 + 64);
  const std::string summary = f->ProfileSummary();
  EXPECT_NE(summary.find("Function profiling"), std::string::npos);
  EXPECT_NE(summary.find("Time in 3 calls to Function.__call__"), std::string::npos);
  EXPECT_NE(summary.find("Sum{acc_dtype=float64}"), std::string::npos) << summary;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST(FunctionTest, GivensUnusedInputsDowncastAndOutputSubsets) {
  Var x = dvector("x"), y = dvector("y"), z = dvector("z");
  // givens: y is replaced by x * 2 before compiling.
  auto f = function({x}, {x + y}, {.givens = {{y, x * 2.0}}});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*(*f)({Doubles({1, 2})}))[0].ToString(), "[3. 6.]");
  // Unused inputs.
  EXPECT_EQ(function({x, z}, {x * 2.0}).status().message(),
            "UnusedInputError: function was asked to create a function computing outputs given "
            "certain inputs, but the provided input variable at index 1 is not part of the "
            "computational graph needed to compute the outputs: z.\nTo make this error into a "
            "warning, you can pass the parameter on_unused_input='warn' to aesara.function. To "
            "disable it completely, use on_unused_input='ignore'.");
  EXPECT_TRUE(function({x, z}, {x * 2.0}, {.on_unused_input = OnUnusedInput::kIgnore}).ok());
  // Downcasting float64 into a float32 input needs allow_input_downcast.
  Var v = fvector("v");
  auto g = function({v}, {v * 2.0f});
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE((*g)({Doubles({1.5})}).ok());
  auto h = function({v}, {v * 2.0f}, {.allow_input_downcast = true});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*(*h)({Doubles({1.5})}))[0].ToString(), "[3.]");
  // output_subset computes the chosen outputs only.
  auto many = function({x}, {x + 1.0, x * 3.0, exp(x)}, {.profile = true});
  ASSERT_TRUE(many.ok());
  auto some = (*many)({Doubles({0, 1})}, {2, 0});
  ASSERT_TRUE(some.ok()) << some.status();
  ASSERT_EQ(some->size(), 2u);
  EXPECT_EQ((*some)[0].ToString(), Doubles({1, std::exp(1.0)}).ToString());
  EXPECT_EQ((*some)[1].ToString(), "[1. 2.]");
  EXPECT_FALSE((*many)({Doubles({0, 1})}, {3}).ok());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// In-place nodes never write into the caller's arguments, even through views.
TEST(FunctionTest, InPlaceNeverWritesIntoArguments) {
  Var x = dmatrix("x");
  Var flat = reshape(x, {-1});
  auto f = function({x}, {exp(flat * 2.0) + 1.0, sin(transpose(x)) * 3.0});
  ASSERT_TRUE(f.ok()) << f.status();
  const Tensor arg = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  const Tensor before = arg.AsType(DType::kFloat64);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE((*f)({arg}).ok());
  EXPECT_TRUE(arg.BitwiseEquals(before));
  // An in-place chain over intermediates gives the unoptimized values.
  Var y = dmatrix("y");
  Var chain = tanh(exp(x) * y + 1.0) * y - x;
  auto fast = function({x, y}, {chain});
  auto slow = function({x, y}, {chain}, {.mode = OptimizerMode::kNone});
  const Tensor yv = *Tensor::Of<double>(DType::kFloat64, {2, 2}, {0.5, -1, 2, 0.25});
  EXPECT_EQ((*(*fast)({arg, yv}))[0].ToString(), (*(*slow)({arg, yv}))[0].ToString());
}

}  // namespace
}  // namespace kiln
