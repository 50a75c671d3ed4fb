#include "core/ops/batchnorm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/kiln.h"
#include "core/ops/op_util.h"
#include "tests/testing/numpy_cases.h"

namespace kiln {
namespace {

// "dtype;shape;values" as a tensor.
Tensor Part(const std::string& text) {
  const std::vector<std::string> p = absl::StrSplit(text, ';');
  return testing::MakeTensor(p[0], p[1], p[2]);
}

std::vector<int> ParseAxes(const std::string& text) {
  std::vector<int> axes;
  for (const auto& a : absl::StrSplit(text, ',')) axes.push_back(std::stoi(std::string(a)));
  return axes;
}

// The op's outputs for the case's inputs: {kind, axes} decide the op, the inputs its arity.
std::vector<Var> Build(const std::string& kind, const std::vector<int>& axes,
                       const std::vector<Var>& in) {
  if (kind == "train") {
    return abstract_batch_norm_train(in[0], in[1], in[2], in[3], in[4],
                                     in.size() == 7 ? in[5] : Var(), in.size() == 7 ? in[6] : Var(),
                                     axes);
  }
  if (kind == "inference") {
    return {abstract_batch_norm_inference(in[0], in[1], in[2], in[3], in[4], in[5], axes)};
  }
  return abstract_batch_norm_train_grad(in[0], in[1], in[2], in[3], in[4], in[5], axes);
}

size_t InputCount(const std::string& kind, size_t parts) {
  if (kind == "train") return parts == 8 ? 5 : 7;
  return 6;
}

// True when the compiled graph of f still has a node whose op name starts with `prefix`.
bool HasOp(const Function& f, const std::string& prefix) {
  for (const Apply* node : f.fgraph().Toposort()) {
    if (node->op().Name().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Every case of tests/golden/aesara_batchnorm_ops.txt (Aesara's perform), by the kernels (mode
// NONE) and by the rewrites' elementwise graphs (FAST_RUN); the inferred shapes match the values.
TEST(BatchNormTest, OpsMatchAesarasPerform) {
  const auto cases = testing::ReadCases("tests/golden/aesara_batchnorm_ops.txt");
  ASSERT_EQ(cases.size(), 12u);
  for (const auto& c : cases) {
    SCOPED_TRACE(absl::StrCat(c[0], " axes ", c[1], " x ", c[2].substr(0, 20)));
    const std::vector<int> axes = ParseAxes(c[1]);
    const size_t n_in = InputCount(c[0], c.size() - 2);
    std::vector<Var> in;
    std::vector<Tensor> values;
    for (size_t i = 0; i < n_in; ++i) {
      values.push_back(Part(c[2 + i]));
      in.push_back(tensor(values.back().dtype(), testing::BroadcastableShape(values.back())));
    }
    const std::vector<Var> outs = Build(c[0], axes, in);
    ASSERT_EQ(outs.size(), c.size() - 2 - n_in);
    for (OptimizerMode mode : {OptimizerMode::kNone, OptimizerMode::kFastRun}) {
      SCOPED_TRACE(OptimizerModeName(mode));
      FunctionOptions options;
      options.mode = mode;
      options.on_unused_input = OnUnusedInput::kIgnore;
      std::vector<Var> wanted = outs;
      for (const Var& o : outs) {
        absl::StatusOr<std::vector<VariablePtr>> dims = infer_shape(o);
        ASSERT_TRUE(dims.ok()) << dims.status();
        for (const VariablePtr& d : *dims) wanted.push_back(d);
      }
      auto f = function(in, wanted, options);
      ASSERT_TRUE(f.ok()) << f.status();
      // FAST_RUN rewrites every abstract op into elementwise graphs; NONE keeps them.
      EXPECT_EQ(HasOp(*f, "AbstractBatchNorm"), mode == OptimizerMode::kNone);
      auto result = (*f)(values);
      ASSERT_TRUE(result.ok()) << result.status();
      size_t dim = outs.size();
      for (size_t k = 0; k < outs.size(); ++k) {
        const Tensor want = Part(c[2 + n_in + k]);
        const Tensor& got = (*result)[k];
        EXPECT_EQ(got.dtype(), want.dtype()) << k;
        ASSERT_EQ(got.shape(), want.shape()) << k;
        const double tol = want.dtype() == DType::kFloat32 ? 2e-6 : 1e-12;
        const std::vector<double> g = testing::Elements(got), w = testing::Elements(want);
        for (size_t i = 0; i < w.size(); ++i) {
          EXPECT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "output " << k << " at " << i;
        }
        for (int d = 0; d < got.ndim(); ++d) {
          EXPECT_EQ(ScalarInt((*result)[dim++]), got.shape()[d]) << "output " << k;
        }
      }
    }
  }
}

TEST(BatchNormTest, NamesTypesAndWireAttributes) {
  const Var x = dtensor4("x");
  const Var p = tensor(DType::kFloat64, {1, std::nullopt, 1, 1}, "p");
  const Var eps = constant(1e-3), factor = constant(0.1);
  const std::vector<Var> train = abstract_batch_norm_train(x, p, p, eps, factor, p, p, {0, 2, 3});
  ASSERT_EQ(train.size(), 5u);
  for (const Var& v : train) ASSERT_TRUE(v.ok()) << v.status();
  const Op& op = train[0]->owner()->op();
  EXPECT_EQ(op.Name(), "AbstractBatchNormTrain{axes=(0, 2, 3)}");
  EXPECT_EQ(train[0]->type()->ToString(), "TensorType(float64, (?, ?, ?, ?))");
  for (int k = 1; k < 5; ++k) {
    EXPECT_EQ(train[k]->type()->ToString(), "TensorType(float64, (1, ?, 1, 1))");
  }
  EXPECT_EQ(abstract_batch_norm_train(x, p, p, eps, factor, Var(), Var(), {0, 2, 3}).size(), 3u);
  const Var inf = abstract_batch_norm_inference(dmatrix("x"), drow("r"), drow("r"), drow("r"),
                                                drow("r"), eps, {0});
  ASSERT_TRUE(inf.ok()) << inf.status();
  EXPECT_EQ(inf->owner()->op().Name(), "AbstractBatchNormInference{axes=(0,)}");
  const std::vector<Var> g = abstract_batch_norm_train_grad(x, x, p, p, p, eps, {0, 2, 3});
  ASSERT_TRUE(g[2].ok()) << g[2].status();
  EXPECT_EQ(g[0]->owner()->op().Name(), "AbstractBatchNormTrainGrad{axes=(0, 2, 3)}");
  EXPECT_EQ(g[2]->type()->ToString(), "TensorType(float64, (1, ?, 1, 1))");
  // Aesara's as_common_dtype: a float32 x with float64 parameters is cast to float64.
  const std::vector<Var> mixed =
      abstract_batch_norm_train(fmatrix("f"), drow("r"), drow("r"), eps, factor, Var(), Var(), {0});
  ASSERT_TRUE(mixed[0].ok()) << mixed[0].status();
  EXPECT_EQ(mixed[0]->type()->ToString(), "TensorType(float64, (?, ?))");
  EXPECT_EQ(mixed[0]->owner()->inputs()[0]->owner()->op().Name(), "Elemwise{Cast{float64}}");
  // One identity from the wire attributes.
  for (const Op* o : {&op, &inf->owner()->op(), &g[0]->owner()->op()}) {
    absl::StatusOr<OpPtr> again = MakeOp(o->type_name(), o->Attrs());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(**again == *o);
    EXPECT_EQ((*again)->Hash(), o->Hash());
  }
  EXPECT_EQ(op.Key(), "AbstractBatchNormTrain{axes=l[0,2,3];}");
  const std::vector<std::string> registered = RegisteredOps();
  for (const char* name :
       {"AbstractBatchNormTrain", "AbstractBatchNormInference", "AbstractBatchNormTrainGrad"}) {
    EXPECT_NE(std::find(registered.begin(), registered.end(), name), registered.end()) << name;
  }
  // The gradient of the output is Aesara's AbstractBatchNormTrainGrad.
  const Var dx = grad(sum(train[0] * train[0]), x);
  ASSERT_TRUE(dx.ok()) << dx.status();
  EXPECT_EQ(dx->owner()->op().Name(), "AbstractBatchNormTrainGrad{axes=(0, 2, 3)}");
}

TEST(BatchNormTest, Errors) {
  const Var x = dmatrix("x"), r = drow("r"), eps = constant(1e-3), factor = constant(0.1);
  EXPECT_EQ(
      abstract_batch_norm_train(x, r, r, eps, factor, Var(), Var(), {0, 2})[0].status().message(),
      "AbstractBatchNormTrain{axes=(0, 2)}: axes should be less than ndim (<2), but (0, 2) "
      "given: input 0 (x) has type TensorType(float64, (?, ?))");
  EXPECT_EQ(abstract_batch_norm_train(x, dvector("v"), r, eps, factor, Var(), Var(), {0})[0]
                .status()
                .message(),
            "AbstractBatchNormTrain{axes=(0,)}: input 1 (scale) has type TensorType(float64, "
            "(?,)) but input 0 (x) has TensorType(float64, (?, ?)): they must have the same "
            "number of dimensions");
  EXPECT_EQ(abstract_batch_norm_inference(x, r, r, r, r, dvector("e"), {0}).status().message(),
            "AbstractBatchNormInference{axes=(0,)}: input 5 (epsilon) has type "
            "TensorType(float64, (?,)) but a real scalar is needed");
  EXPECT_EQ(
      abstract_batch_norm_train_grad(x, imatrix("i"), r, r, r, eps, {0})[0].status().message(),
      "AbstractBatchNormTrainGrad{axes=(0,)}: input 1 (dy) has type TensorType(int32, "
      "(?, ?)) but a float tensor is needed");
  EXPECT_EQ(abstract_batch_norm_train(x, r, r, eps, factor, Var(), Var(), {})[0].status().message(),
            "AbstractBatchNormTrain: there should be at least one axis in 'axes'");
  EXPECT_EQ(std::string(MakeOp("AbstractBatchNormTrain", {{"axes", std::vector<int64_t>{0, 99}}})
                            .status()
                            .message()),
            "AbstractBatchNormTrain: attribute 'axes' must be a dimension in [0, 64], not 99");
  const OpPtr op = std::make_shared<AbstractBatchNormTrain>();
  EXPECT_EQ(ApplyOp(op, {x, r, r, eps}).status().message(),
            "AbstractBatchNormTrain{axes=(0,)}: expects 5 or 7 inputs (x, scale, bias, epsilon, "
            "running_average_factor[, running_mean, running_var]), got 4");
  // At run time: parameters that do not broadcast to the statistics.
  const Var m = dmatrix("m");
  auto f =
      function({x, m}, {abstract_batch_norm_train(x, m, m, eps, factor, Var(), Var(), {0})[0]});
  ASSERT_TRUE(f.ok()) << f.status();
  FunctionOptions none;
  none.mode = OptimizerMode::kNone;
  auto g = function({x, m}, {abstract_batch_norm_train(x, m, m, eps, factor, Var(), Var(), {0})[0]},
                    none);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)({Tensor::Zeros(DType::kFloat64, {5, 3}), Tensor::Zeros(DType::kFloat64, {5, 3})})
                .status()
                .message(),
            "AbstractBatchNormTrain{axes=(0,)}: input 1 (scale) has shape (5, 3) but the "
            "statistics have shape (1, 3): each dim must be 1 or theirs");
}

Tensor Values(const Shape& shape, double scale, double shift) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(1.0 + 1.7 * i) * scale + shift;
  return *Tensor::FromValues<double>(DType::kFloat64, shape, v);
}

// Finite differences: AbstractBatchNormTrain's output through AbstractBatchNormTrainGrad, its
// statistics and running averages (Kiln's terms), AbstractBatchNormInference, and the second
// derivatives of AbstractBatchNormTrainGrad's three outputs w.r.t. each of its inputs.
TEST(BatchNormTest, GradientsByFiniteDifferences) {
  const Tensor x = Values({4, 3, 2}, 1.0, 0.0);
  const Tensor s = Values({1, 3, 1}, 0.5, 1.0), b = Values({1, 3, 1}, 0.3, 0.0);
  const Tensor rm = Values({1, 3, 1}, 0.2, 0.0), rv = Values({1, 3, 1}, 0.2, 1.5);
  const std::vector<int> axes = {0, 2};
  const Var eps = constant(1e-3), factor = constant(0.3);
  for (int k = 0; k < 5; ++k) {
    SCOPED_TRACE(k);
    const absl::Status st = verify_grad(
        [&](const std::vector<Var>& in) {
          return abstract_batch_norm_train(in[0], in[1], in[2], eps, factor, in[3], in[4], axes)[k];
        },
        {x, s, b, rm, rv});
    EXPECT_TRUE(st.ok()) << st;
  }
  const absl::Status inf = verify_grad(
      [&](const std::vector<Var>& in) {
        return abstract_batch_norm_inference(in[0], in[1], in[2], in[3], in[4], eps, axes);
      },
      {x, s, b, rm, rv});
  EXPECT_TRUE(inf.ok()) << inf;
  const Tensor dy = Values({4, 3, 2}, 0.7, 0.1);
  const Tensor invstd = Values({1, 3, 1}, 0.2, 1.0);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    const absl::Status st = verify_grad(
        [&](const std::vector<Var>& in) {
          return abstract_batch_norm_train_grad(in[0], in[1], in[2], in[3], in[4], eps, axes)[k];
        },
        {x, dy, s, rm, invstd});
    EXPECT_TRUE(st.ok()) << st;
  }
  // The second derivative of a cost through the batch-normalized output.
  const absl::Status second = verify_grad(
      [&](const std::vector<Var>& in) {
        const Var out =
            abstract_batch_norm_train(in[0], in[1], in[2], eps, factor, Var(), Var(), axes)[0];
        return grad(sum(out * out * out), in[0]);
      },
      {x, s, b});
  EXPECT_TRUE(second.ok()) << second;
}

}  // namespace
}  // namespace kiln
