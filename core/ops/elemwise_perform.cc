// Elemwise's kernels: each scalar op over broadcast, possibly strided inputs, vectorizable
// contiguous loops, split across cores for large tensors.
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/ops/elemwise.h"
#include "core/ops/elemwise_kernels.h"
#include "core/ops/elemwise_loops.h"
#include "core/runtime/dtype_dispatch.h"

namespace kiln {
namespace {

using loops::MakeOperand;

template <ScalarOpKind K>
struct OpTag {
  static constexpr ScalarOpKind value = K;
};

// Calls f(OpTag<kind>{}).
template <typename F>
absl::Status DispatchScalarOp(ScalarOpKind kind, F&& f) {
  switch (kind) {
#define KILN_SCALAR_OP_CASE(e, name, arity, rule, complex_ok) \
  case ScalarOpKind::e:                                       \
    return f(OpTag<ScalarOpKind::e>{});
    KILN_SCALAR_OPS(KILN_SCALAR_OP_CASE)
#undef KILN_SCALAR_OP_CASE
  }
  return absl::InternalError("unknown scalar op");
}

// A view of `t` (of rank shape.size()) broadcast to `shape`: stride 0 along broadcast dims.
Tensor BroadcastView(const Tensor& t, const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (t.shape()[d] == shape[d]) strides[d] = t.strides()[d];
  }
  return t.View(shape, strides);
}

// The dtype an op computes in: the inputs' common dtype for comparisons and for the ops whose
// output is a real part; the output dtype otherwise. float16 is computed in float32.
DType ComputeDType(const ScalarOp& op, std::span<const Tensor> inputs, DType out) {
  DType compute = out;
  switch (op.kind) {
    case ScalarOpKind::kLt: case ScalarOpKind::kGt: case ScalarOpKind::kLe:
    case ScalarOpKind::kGe: case ScalarOpKind::kEq: case ScalarOpKind::kNeq:
    case ScalarOpKind::kIsNan: case ScalarOpKind::kIsInf: case ScalarOpKind::kAbs:
    case ScalarOpKind::kReal: case ScalarOpKind::kImag: case ScalarOpKind::kAngle:
      compute = inputs[0].dtype();
      for (const Tensor& t : inputs.subspan(1)) compute = PromoteTypes(compute, t.dtype());
      break;
    default:
      break;
  }
  return compute == DType::kFloat16 ? DType::kFloat32 : compute;
}

// switch(cond, a, b): cond is tested for non-zero; the branches are in the output dtype.
absl::Status RunSwitch(std::span<const Tensor> inputs, const Shape& shape, DType dtype,
                       Tensor& out) {
  const Tensor cond = inputs[0].AsType(DType::kBool);
  out = Tensor::Empty(dtype, shape);
  DispatchDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Tensor a = inputs[1].dtype() == dtype ? inputs[1] : inputs[1].AsType(dtype);
    const Tensor b = inputs[2].dtype() == dtype ? inputs[2] : inputs[2].AsType(dtype);
    loops::Map3(shape, out.data<T>(), MakeOperand<bool>(cond, shape), MakeOperand<T>(a, shape),
                MakeOperand<T>(b, shape), [](bool c, T x, T y) { return c ? x : y; });
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status Elemwise::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  const DType out_dtype = node.output_ptr(0)->tensor_type()->dtype();
  const size_t ndim = node.output_ptr(0)->tensor_type()->ndim();
  Shape shape(ndim, 1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<size_t>(inputs[i].ndim()) != ndim) {
      return absl::InvalidArgumentError(absl::StrCat(Name(), ": input ", i, " has shape ",
                                                     ShapeToString(inputs[i].shape()), " but ",
                                                     ndim, " dims were expected"));
    }
    for (size_t d = 0; d < ndim; ++d) {
      const int64_t dim = inputs[i].shape()[d];
      if (dim == shape[d] || dim == 1) continue;
      if (shape[d] != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            Name(), ": input ", i, " has shape ", ShapeToString(inputs[i].shape()),
            ", which does not broadcast with the other inputs on dim ", d, " (size ", shape[d],
            " vs ", dim, ")"));
      }
      shape[d] = dim;
    }
  }

  Tensor out;
  switch (scalar_op_.kind) {
    case ScalarOpKind::kCast:
      outputs[0] = inputs[0].AsType(out_dtype);
      return absl::OkStatus();
    case ScalarOpKind::kSecond:
      outputs[0] = BroadcastView(inputs[1], shape).AsType(out_dtype);
      return absl::OkStatus();
    case ScalarOpKind::kSwitch:
      if (absl::Status s = RunSwitch(inputs, shape, out_dtype, out); !s.ok()) return s;
      outputs[0] = std::move(out);
      return absl::OkStatus();
    default:
      break;
  }

  const DType compute = ComputeDType(scalar_op_, inputs, out_dtype);
  std::vector<Tensor> cast;
  for (const Tensor& in : inputs) cast.push_back(in.dtype() == compute ? in : in.AsType(compute));
  const std::string name = Name();
  absl::Status status = DispatchScalarOp(scalar_op_.kind, [&](auto op_tag) {
    constexpr ScalarOpKind K = decltype(op_tag)::value;
    if constexpr (K == ScalarOpKind::kSwitch || K == ScalarOpKind::kSecond ||
                  K == ScalarOpKind::kCast) {
      return absl::InternalError("handled above");
    } else {
      return RunScalarKind<K>(name, compute, cast, shape, out);
    }
  });
  if (!status.ok()) return status;
  outputs[0] = out.dtype() == out_dtype ? std::move(out) : out.AsType(out_dtype);
  return absl::OkStatus();
}

}  // namespace kiln
