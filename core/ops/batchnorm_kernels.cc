#include "core/ops/batchnorm_kernels.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln::batchnorm {

namespace {

// Calls f(i, offsets) for every flat index i of `shape` in row-major order, offsets[k] being
// the position of operand k (through strides[k]); polls for interruption once per row.
template <size_t N, typename F>
absl::Status Walk(const Shape& shape, const std::array<const std::vector<int64_t>*, N>& strides,
                  F&& f) {
  const int ndim = static_cast<int>(shape.size());
  int64_t total = 1;
  for (int64_t d : shape) total *= d;  // bounded: the caller's tensors exist
  if (total == 0) return absl::OkStatus();
  if (ndim == 0) {
    f(int64_t{0}, std::array<int64_t, N>{});
    return absl::OkStatus();
  }
  const int64_t inner = shape[ndim - 1];
  std::array<int64_t, N> inner_step{};
  for (size_t k = 0; k < N; ++k) inner_step[k] = (*strides[k])[ndim - 1];
  std::vector<int64_t> index(ndim, 0);
  std::array<int64_t, N> base{};
  InterruptPoller poller;
  for (int64_t i = 0; i < total; i += inner) {
    std::array<int64_t, N> off = base;
    for (int64_t j = 0; j < inner; ++j) {
      f(i + j, off);
      for (size_t k = 0; k < N; ++k) off[k] += inner_step[k];
    }
    RETURN_IF_ERROR(poller.Tick(inner));
    // The next row: carry through the outer dims.
    for (int d = ndim - 2; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) base[k] += (*strides[k])[d];
      if (index[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= (*strides[k])[d] * shape[d];
      index[d] = 0;
    }
  }
  return absl::OkStatus();
}

int64_t SizeOf(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

std::vector<int64_t> BroadcastStrides(const Shape& t, const Shape& target) {
  std::vector<int64_t> strides(target.size(), 0);
  int64_t step = 1;
  for (int d = static_cast<int>(target.size()) - 1; d >= 0; --d) {
    strides[d] = t[d] == 1 ? 0 : step;
    step *= t[d];
  }
  return strides;
}

Shape ReducedShape(const Shape& shape, const std::vector<int>& axes) {
  Shape r = shape;
  for (int a : axes) r[a] = 1;
  return r;
}

absl::Status MeanVar(const Shape& shape, const double* x, const Shape& reduced, double count,
                     double* mean, double* var) {
  const std::vector<int64_t> stat = BroadcastStrides(reduced, shape);
  const int64_t n = SizeOf(reduced);
  std::fill(mean, mean + n, 0.0);
  std::fill(var, var + n, 0.0);
  RETURN_IF_ERROR(Walk<1>(shape, {&stat}, [&](int64_t i, const auto& o) { mean[o[0]] += x[i]; }));
  for (int64_t r = 0; r < n; ++r) mean[r] /= count;
  // numpy's var: the mean of the squared deviations from the mean, in a second pass.
  RETURN_IF_ERROR(Walk<1>(shape, {&stat}, [&](int64_t i, const auto& o) {
    const double d = x[i] - mean[o[0]];
    var[o[0]] += d * d;
  }));
  for (int64_t r = 0; r < n; ++r) var[r] /= count;
  return absl::OkStatus();
}

absl::Status Normalize(const Shape& shape, const double* x, const Shape& reduced,
                       const double* mean, const double* invstd, const Operand& scale,
                       const Operand& bias, double* out) {
  const std::vector<int64_t> stat = BroadcastStrides(reduced, shape);
  return Walk<3>(shape, {&stat, &scale.strides, &bias.strides}, [&](int64_t i, const auto& o) {
    out[i] = (x[i] - mean[o[0]]) * (scale.data[o[1]] * invstd[o[0]]) + bias.data[o[2]];
  });
}

absl::Status Infer(const Shape& shape, const double* x, const Operand& scale, const Operand& bias,
                   const Operand& mean, const Operand& var, double epsilon, double* out) {
  return Walk<4>(shape, {&scale.strides, &bias.strides, &mean.strides, &var.strides},
                 [&](int64_t i, const auto& o) {
                   out[i] = (x[i] - mean.data[o[2]]) *
                                (scale.data[o[0]] / std::sqrt(var.data[o[3]] + epsilon)) +
                            bias.data[o[1]];
                 });
}

absl::Status TrainGrad(const Shape& shape, const double* x, const Shape& reduced, double count,
                       const Operand& dy, const Operand& scale, const Operand& x_mean,
                       const Operand& x_invstd, double* g_x, double* g_scale, double* g_bias) {
  const std::vector<int64_t> stat = BroadcastStrides(reduced, shape);
  const int64_t n = SizeOf(reduced);
  std::vector<double> mean_dy_x_diff(n, 0.0), mean_c(n, 0.0);
  std::fill(g_scale, g_scale + n, 0.0);
  std::fill(g_bias, g_bias + n, 0.0);
  const std::array<const std::vector<int64_t>*, 4> operands = {&stat, &dy.strides, &x_mean.strides,
                                                               &x_invstd.strides};
  // mean(dy * (x - x_mean)) over the axes.
  RETURN_IF_ERROR(Walk<4>(shape, operands, [&](int64_t i, const auto& o) {
    mean_dy_x_diff[o[0]] += dy.data[o[1]] * (x[i] - x_mean.data[o[2]]);
  }));
  for (double& v : mean_dy_x_diff) v /= count;
  // c = dy * invstd - (x - x_mean) * mean_dy_x_diff * invstd^3, Aesara's perform order.
  auto c_at = [&](int64_t i, const auto& o) {
    const double x_diff = x[i] - x_mean.data[o[2]];
    const double inv = x_invstd.data[o[3]];
    return dy.data[o[1]] * inv - x_diff * mean_dy_x_diff[o[0]] * (inv * inv * inv);
  };
  RETURN_IF_ERROR(Walk<4>(shape, operands, [&](int64_t i, const auto& o) {
    const double x_diff = x[i] - x_mean.data[o[2]];
    mean_c[o[0]] += c_at(i, o);
    g_scale[o[0]] += dy.data[o[1]] * x_invstd.data[o[3]] * x_diff;
    g_bias[o[0]] += dy.data[o[1]];
  }));
  for (double& v : mean_c) v /= count;
  return Walk<5>(shape, {&stat, &dy.strides, &x_mean.strides, &x_invstd.strides, &scale.strides},
                 [&](int64_t i, const auto& o) {
                   const std::array<int64_t, 4> head = {o[0], o[1], o[2], o[3]};
                   g_x[i] = scale.data[o[4]] * (c_at(i, head) - mean_c[o[0]]);
                 });
}

}  // namespace kiln::batchnorm
