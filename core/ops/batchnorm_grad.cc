// The gradients of the abstract batch-normalization ops, as Aesara 2.9.4 defines them
// (aesara/tensor/nnet/batchnorm.py), written with Kiln's builders.
#include <optional>

#include "core/graph/gradient_types.h"
#include "core/ops/alloc.h"
#include "core/ops/batchnorm.h"
#include "core/ops/grad_util.h"
#include "core/ops/math.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"

namespace kiln {

namespace {

// Aesara's specify_broadcastable(v, *axes): v itself when its dims on `axes` are already known
// to be 1, else SpecifyShape with 1 there.
Var SpecifyBroadcastable(const Var& v, const std::vector<int>& axes) {
  if (!v.ok()) return v;
  StaticShape shape = v.type().shape();
  bool known = true;
  for (int a : axes) {
    known = known && shape[a] == StaticDim(1);
    shape[a] = 1;
  }
  return known ? v : specify_shape(v, shape);
}

// The number of values each statistic over `axes` averages, as a scalar of `dtype`.
Var CountOver(const Var& x, const std::vector<int>& axes, DType dtype) {
  Var n = cast(shape_i(x, axes[0]), dtype);
  for (size_t i = 1; i < axes.size(); ++i) n = n * cast(shape_i(x, axes[i]), dtype);
  return n;
}

// acc + term, or term when acc is unset (Aesara's 0 + term / 0 - term).
void Accumulate(std::optional<Var>& acc, const Var& term) { acc = acc ? *acc + term : term; }
void Subtract(std::optional<Var>& acc, const Var& term) { acc = acc ? *acc - term : -term; }

// The accumulated gradient, or DisconnectedType when nothing reached it.
Var OrDisconnected(const std::optional<Var>& acc) { return acc ? *acc : disconnected_type(); }

}  // namespace

// Aesara's L_op: AbstractBatchNormTrainGrad of the output's cotangent. Aesara drops the
// cotangents of mean, invstd and the new running averages; Kiln adds their terms (the
// gradients of mean(x), 1 / sqrt(var(x) + epsilon) and of the running averages), so that every
// output differentiates; with only the output's cotangent the graph is Aesara's.
std::vector<Var> AbstractBatchNormTrain::LOp(const Apply& node, const std::vector<Var>& g) const {
  const std::vector<Var> in = InputVars(node);
  const Var &x = in[0], &scale = in[1], &bias = in[2], &epsilon = in[3], &factor = in[4];
  const Var mean(node.output(1)), invstd(node.output(2));
  const std::vector<int>& axes = attrs().axes;
  const DType dtype = x.dtype();
  std::vector<Var> grads(node.num_inputs());
  for (Var& v : grads) v = disconnected_type();
  std::optional<Var> dx, dscale, dbias;
  if (!IsDisconnected(*g[0])) {
    const std::vector<Var> r =
        abstract_batch_norm_train_grad(x, g[0], scale, mean, invstd, epsilon, axes);
    dx = r[0];
    dscale = r[1];
    dbias = r[2];
  }
  const Var m = CountOver(x, axes, dtype);
  auto connected = [&](int o) { return o < static_cast<int>(g.size()) && !IsDisconnected(*g[o]); };
  if (connected(1)) Accumulate(dx, g[1] / m);
  if (connected(2)) Accumulate(dx, -(g[2] * pow(invstd, 3)) * (x - mean) / m);
  if (connected(3)) {
    Accumulate(dx, g[3] * factor / m);
    grads[5] = cast(SumToShapeOf(g[3] * (1.0 - factor), in[5]), in[5].dtype());
  }
  if (connected(4)) {
    // Aesara's m of the running variance: size(x) / size(scale).
    const Var mm = cast(prod(shape(x)) / prod(shape(scale)), kFloatX);
    Accumulate(dx, g[4] * factor * (mm / (mm - 1)) * 2.0 * (x - mean) / m);
    grads[6] = cast(SumToShapeOf(g[4] * (1.0 - factor), in[6]), in[6].dtype());
  }
  if (dx) {
    // Terms of the statistics' shape broadcast to x's.
    Var d =
        dx->ok() && dx->type().broadcastable() != x.type().broadcastable() ? second(x, *dx) : *dx;
    grads[0] = cast(d, dtype);
  }
  if (connected(0) || connected(1) || connected(2)) {
    grads[1] = dscale ? *dscale : zeros_like(scale);
    grads[2] = dbias ? *dbias : zeros_like(bias);
  }
  return grads;
}

// Aesara's grad: the partial derivatives of (x - mean) * (scale / sqrt(var + epsilon)) + bias.
std::vector<Var> AbstractBatchNormInference::LOp(const Apply& node,
                                                 const std::vector<Var>& g) const {
  const std::vector<Var> in = InputVars(node);
  const std::vector<int>& axes = attrs().axes;
  const Var& x = in[0];
  const Var& epsilon = in[5];
  const Var& dy = g[0];
  const Var scale = SpecifyBroadcastable(in[1], axes);
  const Var est_mean = SpecifyBroadcastable(in[3], axes);
  const Var est_var = SpecifyBroadcastable(in[4], axes);
  const Var est_var_eps = est_var + epsilon;
  const Var est_std = sqrt(est_var_eps);
  const Var two = constant(2.0);
  const Var dx = dy * (scale / est_std);
  const Var dscale = sum(dy * (x - est_mean), Axes(axes), true) / est_std;
  const Var dbias = sum(dy, Axes(axes), true);
  const Var dmean = -sum(dy, Axes(axes), true) * (scale / est_std);
  const Var dvar =
      -sum(dy * (x - est_mean), Axes(axes), true) * (scale / (two * est_var_eps * est_std));
  return {dx, dscale, dbias, dmean, dvar, disconnected_type()};
}

// Aesara's grad: the second derivatives of the batch-normalized output, each term present only
// for the cotangents that are connected.
std::vector<Var> AbstractBatchNormTrainGrad::LOp(const Apply& node,
                                                 const std::vector<Var>& g) const {
  const std::vector<Var> in = InputVars(node);
  const Var &x = in[0], &dy = in[1], &scale = in[2], &x_mean = in[3], &x_invstd = in[4];
  const Axes axes(attrs().axes);
  const Var x_diff = x - x_mean;
  const Var mean_dy_x_diff = mean(dy * x_diff, axes, true);
  std::optional<Var> g_x, g_dy, g_scale, g_x_mean, g_x_invstd;
  if (!IsDisconnected(*g[0])) {
    const Var& ddinputs = g[0];
    const Var ccc = scale * (ddinputs - mean(ddinputs, axes, true));
    const Var ddd = pow(x_invstd, 3) *
                    (ccc * mean(dy * x_diff, axes, true) + dy * mean(ccc * x_diff, axes, true));
    Subtract(g_x, ddd);
    Accumulate(g_dy, ccc * x_invstd - pow(x_invstd, 3) * x_diff * mean(ccc * x_diff, axes, true));
    const Var eee = dy * x_invstd - pow(x_invstd, 3) * x_diff * mean_dy_x_diff;
    Accumulate(g_scale, sum(ddinputs * (eee - mean(eee, axes, true)), axes, true));
    Accumulate(g_x_mean, sum(ddd, axes, true));
    Accumulate(g_x_invstd,
               sum(ccc * (dy - 3 * pow(x_invstd, 2) * x_diff * mean_dy_x_diff), axes, true));
  }
  if (!IsDisconnected(*g[1])) {
    const Var& ddscale = g[1];
    Accumulate(g_x, x_invstd * ddscale * dy);
    Accumulate(g_dy, x_invstd * ddscale * x_diff);
    Subtract(g_x_mean, x_invstd * ddscale * sum(dy, axes, true));
    Accumulate(g_x_invstd, ddscale * sum(dy * x_diff, axes, true));
  }
  if (!IsDisconnected(*g[2])) Accumulate(g_dy, second(dy, g[2]));
  return {OrDisconnected(g_x),      OrDisconnected(g_dy),       OrDisconnected(g_scale),
          OrDisconnected(g_x_mean), OrDisconnected(g_x_invstd), disconnected_type()};
}

}  // namespace kiln
