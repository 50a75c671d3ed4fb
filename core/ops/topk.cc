#include "core/ops/topk.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/graph/gradient_types.h"
#include "core/graph/op_registry.h"
#include "core/ops/alloc.h"
#include "core/ops/array_compare.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/grad_util.h"
#include "core/ops/indexing.h"
#include "core/ops/math.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/shape_infer.h"
#include "core/tensor/call_limits.h"
#include "core/tensor/status_macros.h"

namespace kiln {

KILN_REGISTER_OP(TopKOp);

absl::Status TopKAttrs::Check() const {
  if (axis < -64 || axis > 64) {
    return absl::InvalidArgumentError(absl::StrCat("attribute 'axis' is out of range: ", axis));
  }
  if (sorted) {
    return absl::UnimplementedError(
        "The sorted parameter is not yet implemented. Use sorted=False for now.");
  }
  if (!IsInteger(idx_dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"idx_dtype\" parameter must be an integer dtype, got \"", DTypeName(idx_dtype), "\""));
  }
  if (!return_values && !return_indices) {
    return absl::InvalidArgumentError(
        "Neither return_values nor return_indices is True, this isn't allowed");
  }
  return absl::OkStatus();
}

std::string TopKOp::Name() const {
  return absl::StrCat("TopKOp{axis=", attrs().axis, ", sorted=", attrs().sorted ? "True" : "False",
                      "}");
}

absl::StatusOr<ApplyPtr> TopKOp::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 2) return Invalid(*this, "expects 2 inputs (x, kth)");
  ASSIGN_OR_RETURN(const TensorType* x, ExpectTensor(*this, inputs, 0, -1, false, "a tensor"));
  const int ndim = x->ndim();
  if (ndim == 0) return Invalid(*this, "Cannot take scalar as input");
  if (attrs().axis < -ndim || attrs().axis >= ndim) {
    return Invalid(*this, absl::StrCat("\"axis\" parameter out of range, expected integer within [",
                                       -ndim, ", ", ndim - 1, "]"));
  }
  RETURN_IF_ERROR(ExpectTensor(*this, inputs, 1, 0, true, "an integer scalar (kth)").status());
  std::vector<TypePtr> outs;
  const StaticShape shape(ndim, std::nullopt);
  if (attrs().return_values) outs.push_back(TensorType::Make(x->dtype(), shape));
  if (attrs().return_indices) outs.push_back(TensorType::Make(attrs().idx_dtype, shape));
  return Apply::Make(self(), std::move(inputs), std::move(outs));
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> TopKOp::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  ShapeVars shape = in[0];
  const int axis = (attrs().axis + static_cast<int>(shape.size())) % static_cast<int>(shape.size());
  ASSIGN_OR_RETURN(shape[axis], Unwrap(cast(abs(Var(node.inputs()[1])), DType::kInt64)));
  return std::vector<ShapeVars>(node.num_outputs(), shape);
}

namespace {

// The positions (along the line) of the entries TopKOp keeps from one line of n entries.
template <typename T, typename At>
void Select(int64_t n, int64_t k, At at, std::vector<int64_t>& keep) {
  keep.clear();
  if (std::abs(k) == n) {  // Aesara returns x itself, in its order
    keep.resize(n);
    std::iota(keep.begin(), keep.end(), 0);
    return;
  }
  if (k == 1 || k == -1) {
    // numpy.argmax (the first of the largest; NaN is largest) or numpy.argmin (the first of the
    // smallest, a NaN first of all).
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        if (k == -1 && std::isnan(at(best))) break;
        if (k == -1 && std::isnan(at(i))) {
          best = i;
          break;
        }
      }
      if (k == 1 ? array_compare::Less(at(best), at(i)) : array_compare::Less(at(i), at(best))) {
        best = i;
      }
    }
    keep.push_back(best);
    return;
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return array_compare::Less(at(a), at(b)); });
  if (k > 0) {
    keep.assign(order.end() - k, order.end());
  } else {
    keep.assign(order.begin(), order.begin() - k);
  }
}

}  // namespace

absl::Status TopKOp::Perform(const Apply& node, std::span<const Tensor> inputs,
                             std::vector<Tensor>& outputs) const {
  const Tensor& input = inputs[0];
  const int ndim = input.ndim();
  const int axis = (attrs().axis + ndim) % ndim;
  const int64_t k = ScalarInt(inputs[1]);
  const int64_t n = input.shape()[axis];
  if (k == 0) return Invalid(*this, "topk: kth cannot be zero");
  if (k > n || k < -n) {
    return Invalid(*this, absl::StrCat("topk: kth (", k,
                                       ") cannot be larger than the size of "
                                       "specified axis ",
                                       axis, " (", n, ")"));
  }
  const int64_t m = std::abs(k);
  Shape shape = input.shape();
  shape[axis] = m;
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, input.dtype()));
  RETURN_IF_ERROR(CheckOutputShape(*this, shape, DType::kInt64));
  const Tensor x = input.AsType(array_compare::ComputeDType(input.dtype()));
  Tensor values = Tensor::Empty(x.dtype(), shape);
  Tensor indices = Tensor::Empty(DType::kInt64, shape);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < ndim; ++d) inner *= shape[d];
  absl::Status status;
  DispatchDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, Eigen::half>) {
      const T* p = x.data<T>();
      T* v = values.data<T>();
      int64_t* q = indices.data<int64_t>();
      std::vector<int64_t> keep;
      InterruptPoller poller;
      for (int64_t o = 0; o < outer && status.ok(); ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* line = p + o * n * inner + i;
          Select<T>(
              n, k, [&](int64_t j) -> const T& { return line[j * inner]; }, keep);
          for (int64_t j = 0; j < m; ++j) {
            v[(o * m + j) * inner + i] = line[keep[j] * inner];
            q[(o * m + j) * inner + i] = keep[j];
          }
          if (status = poller.Tick(n); !status.ok()) break;
        }
      }
    }
  });
  RETURN_IF_ERROR(status);
  size_t next = 0;
  if (attrs().return_values) outputs[next++] = values.AsType(input.dtype());
  if (attrs().return_indices) outputs[next++] = indices.AsType(attrs().idx_dtype);
  return absl::OkStatus();
}

std::vector<std::vector<bool>> TopKOp::ConnectionPattern(const Apply& node) const {
  // kth is connected as Aesara's default pattern says (its gradient is undefined, not zero).
  std::vector<bool> row;
  if (attrs().return_values) row.push_back(true);
  if (attrs().return_indices) row.push_back(false);
  return {row, row};
}

// Aesara's: the values' gradient written at the indices into zeros like x (here through x's
// flat indices: the index along the axis, the position elsewhere).
std::vector<Var> TopKOp::LOp(const Apply& node, const std::vector<Var>& g) const {
  const Var x(node.inputs()[0]);
  const Var k_grad = grad_undefined(Name(), 1, node.inputs()[1], "topk: k is not differentiable");
  if (!attrs().return_indices) {
    return {grad_undefined(Name(), 0, node.inputs()[0],
                           "topk: cannot get gradient without both indices and values"),
            k_grad};
  }
  if (!attrs().return_values || IsDisconnected(*g[0])) return {FloatZerosLike(x), k_grad};
  const Var& gz = g[0];
  const int ndim = x.ndim();
  const int axis = (attrs().axis + ndim) % ndim;
  const Var idx = cast(Var(node.outputs().back()), DType::kInt64);
  Var flat = constant(int64_t{0});
  Var stride = constant(int64_t{1});
  for (int d = ndim - 1; d >= 0; --d) {
    Var coord = idx;
    if (d != axis) {
      std::vector<int> order = {0};
      for (int e = d + 1; e < ndim; ++e) order.push_back(kX);
      for (int e = 0; e < d; ++e) order.insert(order.begin(), kX);
      coord = dimshuffle(arange(shape_i(x, d)), order);
    }
    flat = flat + coord * stride;
    stride = stride * shape_i(x, d);
  }
  // Every output entry's flat index in x (broadcast to the output's shape).
  const Var flat_idx = flatten(flat + zeros_like(idx));
  const Var zeros = alloc(scalar_constant(0.0, gz.dtype()), {prod(shape(x))});
  const Var scattered = set_subtensor(take(zeros, flat_idx), flatten(gz));
  return {reshape(scattered, shape(x)), k_grad};
}

std::vector<Var> topk_and_argtopk(const Var& x, const Var& kth, std::optional<int> axis,
                                  bool sorted, DType idx_dtype) {
  if (!x.ok()) return {x, x};
  Var input = x;
  if (!axis) input = flatten(x), axis = 0;
  const TopKAttrs attrs{*axis, sorted, true, true, idx_dtype};
  if (absl::Status s = attrs.Check(); !s.ok()) {
    const Var error(absl::Status(s.code(), absl::StrCat("TopKOp: ", s.message())));
    return {error, error};
  }
  if (!input.ok()) return {input, input};
  if (!kth.ok()) return {kth, kth};
  absl::StatusOr<ApplyPtr> node =
      std::make_shared<TopKOp>(attrs)->MakeNode({input.ptr(), kth.ptr()});
  if (!node.ok()) return {Var(node.status()), Var(node.status())};
  return {Var((*node)->output(0)), Var((*node)->output(1))};
}

}  // namespace kiln
