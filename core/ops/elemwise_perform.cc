// Elemwise's kernels: each scalar op over broadcast, possibly strided inputs, vectorizable
// contiguous loops, split across cores for large tensors.
#include <algorithm>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "core/ops/composite.h"
#include "core/ops/composite_kernel.h"
#include "core/ops/elemwise.h"
#include "core/ops/elemwise_kernels.h"
#include "core/ops/elemwise_loops.h"
#include "core/ops/op_util.h"
#include "core/ops/special_fns.h"
#include "core/tensor/dtype_dispatch.h"

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
#define KILN_SCALAR_OP_CASE(e, ...) \
  case ScalarOpKind::e:             \
    return f(OpTag<ScalarOpKind::e>{});
    KILN_SCALAR_OPS(KILN_SCALAR_OP_CASE)
#undef KILN_SCALAR_OP_CASE
  }
  return absl::InternalError("unknown scalar op");
}

// The dtype an op computes in: the inputs' common dtype for comparisons and for the ops whose
// output is a real part; the output dtype otherwise. float16 is computed in float32.
DType ComputeDType(const ScalarOp& op, std::span<const Tensor> inputs, DType out) {
  DType compute = out;
  switch (op.kind) {
    case ScalarOpKind::kLt:
    case ScalarOpKind::kGt:
    case ScalarOpKind::kLe:
    case ScalarOpKind::kGe:
    case ScalarOpKind::kEq:
    case ScalarOpKind::kNeq:
    case ScalarOpKind::kIsNan:
    case ScalarOpKind::kIsInf:
    case ScalarOpKind::kAbs:
    case ScalarOpKind::kReal:
    case ScalarOpKind::kImag:
    case ScalarOpKind::kAngle:
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

// The broadcast shape of inputs of rank ndim, or the error naming the first that clashes.
absl::StatusOr<Shape> BroadcastShapes(const std::string& name, std::span<const Tensor> inputs,
                                      size_t ndim) {
  Shape shape(ndim, 1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (static_cast<size_t>(inputs[i].ndim()) != ndim) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": input ", i, " has shape ",
                                                     ShapeToString(inputs[i].shape()), " but ",
                                                     ndim, " dims were expected"));
    }
    for (size_t d = 0; d < ndim; ++d) {
      const int64_t dim = inputs[i].shape()[d];
      if (dim == shape[d] || dim == 1) continue;
      if (shape[d] != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": input ", i, " has shape ", ShapeToString(inputs[i].shape()),
                         ", which does not broadcast with the other inputs on dim ", d, " (size ",
                         shape[d], " vs ", dim, ")"));
      }
      shape[d] = dim;
    }
  }
  return shape;
}

// One scalar op (not a Composite) over inputs broadcast to `shape`, giving `out_dtype`.
absl::Status ComputeScalarOp(const ScalarOp& op, const std::string& name, DType out_dtype,
                             const Shape& shape, std::span<const Tensor> inputs, Tensor& out) {
  switch (op.kind) {
    case ScalarOpKind::kCast:
      out = inputs[0].AsType(out_dtype);
      return absl::OkStatus();
    case ScalarOpKind::kSecond:
      out = inputs[1].BroadcastTo(shape)->AsType(out_dtype);
      return absl::OkStatus();
    case ScalarOpKind::kSwitch:
      return RunSwitch(inputs, shape, out_dtype, out);
    default:
      break;
  }
  const DType compute = ComputeDType(op, inputs, out_dtype);
  // The inputs in the compute dtype: themselves when they are already (no copy per call).
  std::vector<Tensor> converted;
  std::span<const Tensor> cast = inputs;
  if (std::any_of(inputs.begin(), inputs.end(),
                  [&](const Tensor& in) { return in.dtype() != compute; })) {
    for (const Tensor& in : inputs) {
      converted.push_back(in.dtype() == compute ? in : in.AsType(compute));
    }
    cast = converted;
  }
  if (IsSpecialFn(op.kind)) {  // special_kernels.cc
    RETURN_IF_ERROR(RunSpecialFn(op.kind, name, compute, cast, shape, out));
    if (out.dtype() != out_dtype) out = out.AsType(out_dtype);
    return absl::OkStatus();
  }
  absl::Status status = DispatchScalarOp(op.kind, [&](auto op_tag) {
    constexpr ScalarOpKind K = decltype(op_tag)::value;
    if constexpr (K == ScalarOpKind::kSwitch || K == ScalarOpKind::kSecond ||
                  K == ScalarOpKind::kCast || K == ScalarOpKind::kComposite || IsSpecialFn(K)) {
      return absl::InternalError("handled elsewhere");
    } else {
      return RunScalarKind<K>(name, compute, cast, shape, out);
    }
  });
  if (!status.ok()) return status;
  if (out.dtype() != out_dtype) out = out.AsType(out_dtype);
  return absl::OkStatus();
}

// A Composite's program, instruction by instruction over whole tensors (the fused, blocked
// executor comes with the runtime).
absl::Status RunProgram(const ScalarProgram& program, const std::string& name, const Shape& shape,
                        std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  std::vector<Tensor> regs(inputs.begin(), inputs.end());
  const Shape ones(shape.size(), 1);
  for (const Tensor& c : program.constants) {
    regs.push_back(c.View(ones, std::vector<int64_t>(shape.size(), 0)));
  }
  for (const ScalarProgram::Instr& instr : program.instrs) {
    std::vector<Tensor> args;
    for (int r : instr.args) args.push_back(regs[r]);
    ASSIGN_OR_RETURN(Shape s, BroadcastShapes(name, args, shape.size()));
    Tensor out;
    RETURN_IF_ERROR(ComputeScalarOp(instr.op, name, instr.dtype, s, args, out));
    regs.push_back(std::move(out));
  }
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    const Tensor& r = regs[program.outputs[k]];
    outputs[k] = r.shape() == shape ? r : r.BroadcastTo(shape)->Contiguous();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Elemwise::Perform(const Apply& node, std::span<const Tensor> inputs,
                               std::vector<Tensor>& outputs) const {
  const size_t ndim = node.output_ptr(0)->tensor_type()->ndim();
  absl::StatusOr<Shape> shape = BroadcastShapes(name_, inputs, ndim);
  if (!shape.ok()) return shape.status();
  // Aesara's rule, which the optimizer's rewrites rely on: only dims of static size 1 broadcast.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const StaticShape& type_shape = node.inputs()[i]->tensor_type()->shape();
    for (size_t d = 0; d < ndim; ++d) {
      if (inputs[i].shape()[d] == 1 && (*shape)[d] != 1 && type_shape[d] != StaticDim(1)) {
        return absl::InvalidArgumentError(absl::StrCat(
            Name(), ": input ", i, " has shape ", ShapeToString(inputs[i].shape()),
            " and would broadcast on dim ", d, " to size ", (*shape)[d], ", but its type ",
            node.inputs()[i]->type()->ToString(),
            " does not mark that dim broadcastable (static size 1), as Aesara requires"));
      }
    }
  }
  // Broadcasting small inputs, (2^22, 1, 1) + (1, 2^22, 1) + (1, 1, 2^22), can make a shape whose
  // size overflows: refused before any output is allocated.
  for (int o = 0; o < node.num_outputs(); ++o) {
    RETURN_IF_ERROR(CheckOutputShape(*this, *shape, node.output_ptr(o)->tensor_type()->dtype()));
  }
  // In place: the destroyed input's buffer becomes the output's when it fits exactly (the
  // runtime has made sure nothing else reads it).
  const DType out_dtype0 = node.output_ptr(0)->tensor_type()->dtype();
  for (const auto& [o, i] : inplace_pattern_) {
    // (An n-ary add or mul reads operands 2 and later after its first write.)
    if (i >= 2 && scalar_op_.kind != ScalarOpKind::kComposite) continue;
    const Tensor& victim = inputs[i];
    if (victim.shape() == *shape && victim.dtype() == out_dtype0 && victim.is_contiguous()) {
      outputs[o] = victim;
    }
  }
  if (scalar_op_.kind == ScalarOpKind::kComposite) {
    if (RunFusedBlocks(*scalar_op_.program, *shape, inputs, outputs)) return absl::OkStatus();
    return RunProgram(*scalar_op_.program, name_, *shape, inputs, outputs);
  }
  const DType out_dtype = node.output_ptr(0)->tensor_type()->dtype();
  if (RunSimpleElemwise(scalar_op_.kind, out_dtype, *shape, inputs, outputs[0])) {
    return absl::OkStatus();
  }
  return ComputeScalarOp(scalar_op_, name_, out_dtype, *shape, inputs, outputs[0]);
}

}  // namespace kiln
