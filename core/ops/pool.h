// Aesara's aesara.tensor.signal.pool: max, sum and average pooling over the last `ndim` dims of a
// tensor (Pool), its gradients (MaxPoolGrad, AveragePoolGrad) and the gradient of the max
// gradient (DownsampleFactorMaxGradGrad). Window sizes, strides and paddings are integer vectors
// (symbolic inputs, as in Aesara 2.9.4's make_node); kernels in pool_kernels.cc.
#ifndef KILN_CORE_OPS_POOL_H_
#define KILN_CORE_OPS_POOL_H_

#include <optional>
#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"

namespace kiln {

// The pooling modes an op of the family accepts, as a bit set, and the default of its `mode`.
enum PoolModeSet : unsigned {
  kPoolMax = 1,
  kPoolSum = 2,
  kPoolAverageIncPad = 4,
  kPoolAverageExcPad = 8,
  kPoolAverages = kPoolSum | kPoolAverageIncPad | kPoolAverageExcPad,
  kPoolAnyMode = kPoolMax | kPoolAverages,
};

// OK when `mode` is one of `allowed` and ndim is in [1, 64]; else INVALID_ARGUMENT naming it.
absl::Status CheckPoolAttrs(const std::string& mode, int ndim, unsigned allowed);

// The props of the pooling ops (Aesara's __props__ = ("ignore_border", "mode", "ndim")):
// whether a partial window at the end of a dim is dropped, the operation on each window, and the
// number of trailing dims pooled.
template <unsigned kAllowed, PoolModeSet kDefault>
struct PoolAttrsOf {
  bool ignore_border = false;
  std::string mode = kDefault == kPoolMax ? "max" : "average_inc_pad";
  int ndim = 2;
  static constexpr auto Fields() {
    return std::tuple{AttrField{"ignore_border", &PoolAttrsOf::ignore_border},
                      AttrField{"mode", &PoolAttrsOf::mode}, AttrField{"ndim", &PoolAttrsOf::ndim}};
  }
  absl::Status Check() const { return CheckPoolAttrs(mode, ndim, kAllowed); }
};
using PoolAttrs = PoolAttrsOf<kPoolAnyMode, kPoolMax>;
using MaxPoolGradAttrs = PoolAttrsOf<kPoolMax, kPoolMax>;
using AveragePoolGradAttrs = PoolAttrsOf<kPoolAverages, kPoolAverageIncPad>;

// Pool{ignore_border, mode, ndim}(x, ws, stride, pad): each window of x's last ndim dims (ws
// long, stride apart, on x padded by pad zeros each side) reduced by max, sum or an average that
// counts the padding (average_inc_pad) or not (average_exc_pad); max and sum skip the padding.
class Pool final : public DeclaredOp<Pool, PoolAttrs> {
 public:
  KILN_DECLARED_OP("Pool")  // Pool{ignore_border=True, mode='max', ndim=2}
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {false}, {false}, {false}};
  }
};

// MaxPoolGrad{ignore_border, mode='max', ndim}(x, maxout, gz, ws, stride, pad): x's gradient
// of max pooling: each gz entry added to every element of its window equal to the maximum.
class MaxPoolGrad final : public DeclaredOp<MaxPoolGrad, MaxPoolGradAttrs> {
 public:
  KILN_DECLARED_OP("MaxPoolGrad")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {true}, {true}, {false}, {false}, {false}};
  }
};

// AveragePoolGrad{ignore_border, mode, ndim}(x, gz, ws, stride, pad): x's gradient of sum or
// average pooling: each gz entry (divided by its window's count) added to its window.
class AveragePoolGrad final : public DeclaredOp<AveragePoolGrad, AveragePoolGradAttrs> {
 public:
  KILN_DECLARED_OP("AveragePoolGrad")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {true}, {false}, {false}, {false}};
  }
};

// DownsampleFactorMaxGradGrad{ignore_border, mode='max', ndim}(x, maxout, ggx, ws, stride,
// pad): the gradient of MaxPoolGrad with respect to gz: each window's sum of ggx over the
// elements equal to the window's maximum, in maxout's shape.
class DownsampleFactorMaxGradGrad final
    : public DeclaredOp<DownsampleFactorMaxGradGrad, MaxPoolGradAttrs> {
 public:
  KILN_DECLARED_OP("DownsampleFactorMaxGradGrad")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {true}, {true}, {false}, {false}, {false}};
  }
};

// MaxPoolRop{ignore_border, mode='max', ndim}(x, eval_point, ws, stride, pad): the R-operator
// of max pooling: per window, eval_point at the window's first maximum of x (C order, NaN
// first, padding skipped), in eval_point's dtype and the pooled shape.
class MaxPoolRop final : public DeclaredOp<MaxPoolRop, MaxPoolGradAttrs> {
 public:
  KILN_DECLARED_OP("MaxPoolRop")
  std::vector<std::vector<bool>> ConnectionPattern(const Apply&) const override {
    return {{true}, {true}, {false}, {false}, {false}};
  }
};

// aesara.tensor.signal.pool.pool_2d / pool_3d: Pool{ignore_border, mode, 2 or 3} on input's
// last 2 (3) dims; stride defaults to ws. ws, stride and pad become int64 constants, as there.
Var pool_2d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::optional<std::vector<int64_t>>& stride = std::nullopt,
            const std::vector<int64_t>& pad = {0, 0}, const std::string& mode = "max");
Var pool_3d(const Var& input, const std::vector<int64_t>& ws, bool ignore_border,
            const std::optional<std::vector<int64_t>>& stride = std::nullopt,
            const std::vector<int64_t>& pad = {0, 0, 0}, const std::string& mode = "max");
// The same over the last ws.size() dims, with ws, stride and pad as variables.
Var pool(const Var& input, const Var& ws, const Var& stride, const Var& pad, bool ignore_border,
         const std::string& mode, int ndim);
// aesara.tensor.signal.pool.max_pool_2d_same_size: input with every element that is not the
// maximum of its (non-overlapping) patch set to zero.
Var max_pool_2d_same_size(const Var& input, const std::vector<int64_t>& patch_size);

}  // namespace kiln

#endif  // KILN_CORE_OPS_POOL_H_
