#include "core/grad/verify_grad.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/grad/gradient.h"
#include "core/graph/constructors.h"
#include "core/tensor/status_macros.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/compile/function.h"

namespace kiln {
namespace {

double TypeEps(DType d) { return d == DType::kFloat64 ? 1e-7 : d == DType::kFloat32 ? 3e-4 : 1e-1; }
double TypeTol(DType d) { return d == DType::kFloat64 ? 1e-4 : d == DType::kFloat32 ? 1e-2 : 5e-2; }

// A symbolic input for a value: its dtype, with the size-1 dims broadcastable.
Var InputLike(const Tensor& value, const std::string& name) {
  StaticShape shape;
  for (int64_t d : value.shape()) shape.push_back(d == 1 ? StaticDim(1) : std::nullopt);
  return tensor(value.dtype(), shape, name);
}

std::vector<double> Values(const Tensor& t) {
  const Tensor c = t.AsType(DType::kFloat64).Contiguous();
  return std::vector<double>(c.data<double>(), c.data<double>() + c.size());
}

absl::StatusOr<double> EvalScalar(const Function& f, const std::vector<Tensor>& args) {
  ASSIGN_OR_RETURN(std::vector<Tensor> out, f(args));
  return (out)[0].ElementAsDouble(0);
}

// The forward differences (f(x + eps e_i) - f(x)) / eps for every element of every input.
absl::StatusOr<std::vector<std::vector<double>>> NumericGrad(const Function& cost,
                                                             std::vector<Tensor> args, int n_pt,
                                                             double eps) {
  ASSIGN_OR_RETURN(double f0, EvalScalar(cost, args));
  std::vector<std::vector<double>> grads;
  for (int a = 0; a < n_pt; ++a) {
    const Tensor original = args[a];
    std::vector<double> x = Values(original);
    std::vector<double> g(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double saved = x[i];
      x[i] = saved + eps;
      args[a] = Tensor::FromValues<double>(DType::kFloat64, original.shape(), x)
                    ->AsType(original.dtype());
      absl::StatusOr<double> f1 = EvalScalar(cost, args);
      if (!f1.ok()) return f1.status();
      g[i] = (*f1 - f0) / eps;
      x[i] = saved;
    }
    args[a] = original;
    grads.push_back(std::move(g));
  }
  return grads;
}

}  // namespace

absl::Status verify_grad(const std::function<Var(const std::vector<Var>&)>& fun,
                         const std::vector<Tensor>& pt, const VerifyGradOptions& options) {
  double eps = 0, tol = 0;
  std::vector<Var> inputs;
  for (size_t i = 0; i < pt.size(); ++i) {
    const DType d = pt[i].dtype();
    if (!IsFloat(d)) {
      return absl::InvalidArgumentError(
          absl::StrCat("verify_grad can work only with floating point inputs, but input ", i,
                       " has dtype \"", DTypeName(d), "\"."));
    }
    eps = std::max(eps, TypeEps(d));
    tol = std::max(tol, TypeTol(d));
    inputs.push_back(InputLike(pt[i], absl::StrCat("input ", i)));
  }
  eps = options.eps.value_or(eps);
  const double abs_tol = options.abs_tol.value_or(tol), rel_tol = options.rel_tol.value_or(tol);

  const Var output = fun(inputs);
  if (!output.ok()) return output.status();
  ASSIGN_OR_RETURN(Function output_fn, function(inputs, {output}));
  absl::StatusOr<std::vector<Tensor>> value = (output_fn)(pt);
  if (!value.ok()) return value.status();
  const Shape out_shape = (*value)[0].shape();

  // cost = sum(u * output) for a random projection u, an extra input.
  const Var u = InputLike(Tensor::Zeros(DType::kFloat64, out_shape), "random projection");
  const Var cost = sum(u * output);
  std::vector<Var> cost_inputs = inputs;
  cost_inputs.push_back(u);
  absl::StatusOr<Function> cost_fn = function(cost_inputs, {cost});
  if (!cost_fn.ok()) return cost_fn.status();
  GradOptions grad_options;
  grad_options.disconnected_inputs = DisconnectedInputs::kIgnore;
  absl::StatusOr<std::vector<Var>> grads = grad(cost, inputs, grad_options);
  if (!grads.ok()) return grads.status();
  absl::StatusOr<Function> grad_fn = function(cost_inputs, *grads);
  if (!grad_fn.ok()) return grad_fn.status();

  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(0.5, 1.5);
  for (int test = 0; test < options.n_tests; ++test) {
    std::vector<double> projection(ShapeSize(out_shape));
    for (double& p : projection) p = uniform(rng);
    std::vector<Tensor> args = pt;
    args.push_back(*Tensor::FromValues<double>(DType::kFloat64, out_shape, projection));
    absl::StatusOr<std::vector<std::vector<double>>> numeric =
        NumericGrad(*cost_fn, args, static_cast<int>(pt.size()), eps);
    if (!numeric.ok()) return numeric.status();
    absl::StatusOr<std::vector<Tensor>> analytic = (*grad_fn)(args);
    if (!analytic.ok()) return analytic.status();

    // The element whose error is largest relative to the tolerances: min(abs/abs_tol, rel/rel_tol).
    double worst = -1, worst_abs = 0, worst_rel = 0, val1 = 0, val2 = 0;
    size_t worst_arg = 0, worst_pos = 0;
    for (size_t a = 0; a < pt.size(); ++a) {
      const std::vector<double> g = Values((*analytic)[a]);
      if (g.size() != (*numeric)[a].size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "argument element ", a, " has wrong shapes: the gradient has ", g.size(), " elements"));
      }
      for (size_t i = 0; i < g.size(); ++i) {
        const double n = (*numeric)[a][i];
        const double abs_err = std::fabs(g[i] - n);
        const double rel_err = abs_err / std::max(std::fabs(g[i]) + std::fabs(n), 1e-8);
        if (!std::isfinite(abs_err)) {
          return absl::InvalidArgumentError(absl::StrCat("abs_err not finite: argument ", a,
                                                         " position ", i, ": analytic ", g[i],
                                                         ", numeric ", n));
        }
        const double scaled = std::min(abs_err / abs_tol, rel_err / rel_tol);
        if (scaled > worst) {
          worst = scaled;
          worst_arg = a;
          worst_pos = i;
          worst_abs = abs_err;
          worst_rel = rel_err;
          val1 = g[i];
          val2 = n;
        }
      }
    }
    if (worst_abs > abs_tol && worst_rel > rel_tol) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "GradientError: numeric gradient and analytic gradient exceed tolerance:\n"
          "        At position %d of argument %d with shape %s,\n"
          "            val1 = %f      ,  val2 = %f\n"
          "            abs. error = %f,  abs. tolerance = %f\n"
          "            rel. error = %f,  rel. tolerance = %f",
          worst_pos, worst_arg, ShapeToString(pt[worst_arg].shape()), val1, val2, worst_abs,
          abs_tol, worst_rel, rel_tol));
    }
  }
  return absl::OkStatus();
}

absl::Status verify_grad(const OpPtr& op, const std::vector<Tensor>& pt,
                         const VerifyGradOptions& options) {
  return verify_grad([&](const std::vector<Var>& in) { return ApplyOp(op, in); }, pt, options);
}

}  // namespace kiln
