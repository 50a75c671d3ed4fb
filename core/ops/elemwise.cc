#include "core/ops/elemwise.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/composite.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/shape_infer.h"

namespace kiln {
namespace {

// The class name of a scalar op (str of Aesara's unnamed scalar op, as the inplace rewrite makes
// it): "Add", "TrueDivide", "LT", "ArcCos"; Cast and Composite keep their names.
std::string ScalarClassName(const ScalarOp& op) {
  switch (op.kind) {
    case ScalarOpKind::kCast:
    case ScalarOpKind::kComposite: return op.Name();
    case ScalarOpKind::kLt: return "LT";
    case ScalarOpKind::kGt: return "GT";
    case ScalarOpKind::kLe: return "LE";
    case ScalarOpKind::kGe: return "GE";
    case ScalarOpKind::kEq: return "EQ";
    case ScalarOpKind::kNeq: return "NEQ";
    case ScalarOpKind::kAnd: return "AND";
    case ScalarOpKind::kOr: return "OR";
    case ScalarOpKind::kXor: return "XOR";
    case ScalarOpKind::kIsNan: return "IsNan";
    case ScalarOpKind::kIsInf: return "IsInf";
    case ScalarOpKind::kMaximum: return "ScalarMaximum";
    case ScalarOpKind::kMinimum: return "ScalarMinimum";
    case ScalarOpKind::kGammaln: return "GammaLn";
    case ScalarOpKind::kDeg2Rad: return "Deg2Rad";
    case ScalarOpKind::kRad2Deg: return "Rad2Deg";
    default: break;
  }
  // Otherwise each '_'-separated word capitalized, "arc" a word of its own: round_half_to_even
  // -> RoundHalfToEven, arctan2 -> ArcTan2, log1p -> Log1p.
  std::string name = op.Name(), out;
  bool upper = true;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '_') {
      upper = true;
      continue;
    }
    const bool after_arc = i == 3 && name.starts_with("arc");
    out += upper || after_arc ? absl::ascii_toupper(name[i]) : name[i];
    upper = false;
  }
  return out;
}

}  // namespace

OpPtr Elemwise::Make(ScalarOp scalar_op, InplacePattern inplace_pattern) {
  // Ops are immutable, so every plain Elemwise of one scalar op (and cast dtype) is one shared
  // instance: a gradient of 500,000 nodes holds a few dozen ops, not 500,000.
  static const std::vector<OpPtr> shared = [] {
    std::vector<OpPtr> ops(NumScalarOps() * kNumDTypes);
    for (int k = 0; k < NumScalarOps(); ++k) {
      const auto kind = static_cast<ScalarOpKind>(k);
      if (kind == ScalarOpKind::kComposite) continue;  // each has its own program
      const int dtypes = kind == ScalarOpKind::kCast ? kNumDTypes : 1;
      for (int d = 0; d < dtypes; ++d) {
        ops[k * kNumDTypes + d] = std::make_shared<Elemwise>(
            kind == ScalarOpKind::kCast ? ScalarOp(kind, static_cast<DType>(d)) : ScalarOp(kind));
      }
    }
    return ops;
  }();
  if (inplace_pattern.empty() && scalar_op.kind != ScalarOpKind::kComposite) {
    const int d = scalar_op.kind == ScalarOpKind::kCast ? static_cast<int>(scalar_op.cast_to) : 0;
    return shared[static_cast<int>(scalar_op.kind) * kNumDTypes + d];
  }
  return std::make_shared<Elemwise>(scalar_op, std::move(inplace_pattern));
}

Elemwise::Elemwise(ScalarOp scalar_op, InplacePattern inplace_pattern)
    : scalar_op_(std::move(scalar_op)), inplace_pattern_(std::move(inplace_pattern)) {
  if (inplace_pattern_.empty()) {
    name_ = scalar_op_.ElemwiseName();
    return;
  }
  name_ = absl::StrCat("Elemwise{", ScalarClassName(scalar_op_), "}[",
                       absl::StrJoin(inplace_pattern_, ", ",
                                     [](std::string* out, const std::pair<int, int>& p) {
                                       absl::StrAppend(out, "(", p.first, ", ", p.second, ")");
                                     }),
                       "]");
}

absl::StatusOr<ApplyPtr> Elemwise::MakeNode(std::vector<VariablePtr> inputs) const {
  const int arity = scalar_op_.kind == ScalarOpKind::kComposite ? scalar_op_.program->num_inputs()
                                                                : ScalarOpArity(scalar_op_.kind);
  const int n = static_cast<int>(inputs.size());
  if ((arity >= 0 && n != arity) || (arity < 0 && n < 2)) {
    return absl::InvalidArgumentError(absl::StrCat(
        Name(), ": expects ", arity >= 0 ? absl::StrCat(arity) : "at least 2", " inputs, got ", n));
  }
  std::vector<const TensorType*> types;
  int ndim = 0;
  for (int i = 0; i < n; ++i) {
    const TensorType* t = inputs[i]->tensor_type();
    if (t == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(Name(), ": input ", i, " has type ",
                                                     inputs[i]->type()->ToString(),
                                                     ", which is not a TensorType"));
    }
    types.push_back(t);
    ndim = std::max(ndim, t->ndim());
  }

  // Static shape by broadcasting; remember which input fixed each known dim for the error.
  StaticShape shape(ndim, StaticDim(1));
  std::vector<int> fixed_by(ndim, -1);
  for (int i = 0; i < n; ++i) {
    const int pad = ndim - types[i]->ndim();
    for (int d = 0; d < types[i]->ndim(); ++d) {
      const StaticDim& dim = types[i]->shape()[d];
      StaticDim& out = shape[pad + d];
      if (dim == 1) continue;
      if (!dim) {
        if (out == 1) out = std::nullopt;
        continue;
      }
      if (fixed_by[pad + d] >= 0 && *out != *dim) {
        const TensorType* first = types[fixed_by[pad + d]];
        return absl::InvalidArgumentError(
            absl::StrCat(Name(), ": input ", i, " has type ", types[i]->ToString(), " but input ",
                         fixed_by[pad + d], " has ", first->ToString(), ": shapes ",
                         StaticShapeToString(first->shape()), " and ",
                         StaticShapeToString(types[i]->shape()), " do not broadcast"));
      }
      out = dim;
      fixed_by[pad + d] = i;
    }
  }

  std::vector<DType> dtypes;
  for (const TensorType* t : types) dtypes.push_back(t->dtype());
  absl::StatusOr<DType> dtype = ScalarOutputDType(scalar_op_, dtypes);
  if (!dtype.ok()) {
    std::string described;
    for (int i = 0; i < n; ++i) {
      absl::StrAppend(&described,
                      i == 0       ? ""
                      : i + 1 == n ? " and "
                                   : ", ",
                      "input ", i, " has type ", types[i]->ToString());
    }
    return absl::InvalidArgumentError(
        absl::StrCat(Name(), ": ", described, ": ", dtype.status().message()));
  }

  // Lower-rank inputs are broadcast on the left by an InplaceDimShuffle{x,...,0,...}.
  for (int i = 0; i < n; ++i) {
    const int pad = ndim - types[i]->ndim();
    if (pad == 0) continue;
    std::vector<int> order(pad, kX);
    for (int d = 0; d < types[i]->ndim(); ++d) order.push_back(d);
    ASSIGN_OR_RETURN(OpPtr ds, DimShuffle::Make(types[i]->broadcastable(), std::move(order)));
    absl::StatusOr<ApplyPtr> node = ds->MakeNode({inputs[i]});
    if (!node.ok()) return node.status();
    inputs[i] = (*node)->output(0);
  }
  std::vector<TypePtr> outputs = {TensorType::Make(*dtype, shape)};
  if (scalar_op_.kind == ScalarOpKind::kComposite) {
    outputs.clear();
    for (int r : scalar_op_.program->outputs) {
      outputs.push_back(TensorType::Make(scalar_op_.program->RegisterDType(r), shape));
    }
  }
  // An in-place output overwrites an input of its own dtype and rank.
  for (const auto& [o, i] : inplace_pattern_) {
    if (o < 0 || o >= static_cast<int>(outputs.size()) || i < 0 || i >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat(Name(), ": the inplace pattern names output ", o, " and input ", i));
    }
    const auto& out = static_cast<const TensorType&>(*outputs[o]);
    const TensorType& in = *inputs[i]->tensor_type();
    if (in.dtype() != out.dtype() || in.ndim() != out.ndim()) {
      return absl::InvalidArgumentError(absl::StrCat(Name(), ": output ", o, " (", out.ToString(),
                                                     ") cannot overwrite input ", i, " (",
                                                     in.ToString(), ")"));
    }
  }
  return Apply::Make(self(), std::move(inputs), outputs);
}

// Each output dim is the broadcast of the inputs' dims (inputs are already of equal rank).
absl::StatusOr<std::vector<std::vector<VariablePtr>>> Elemwise::InferShape(
    const Apply& node, const std::vector<std::vector<VariablePtr>>& in) const {
  const int ndim = node.output_ptr(0)->tensor_type()->ndim();
  ShapeVars out;
  for (int d = 0; d < ndim; ++d) {
    std::vector<VariablePtr> dims;
    for (const ShapeVars& s : in) dims.push_back(s[d]);
    out.push_back(BroadcastDim(dims));
  }
  return std::vector<ShapeVars>(node.num_outputs(), out);
}

// --- Wire attributes ----------------------------------------------------------------------------

KILN_REGISTER_OP_FIELDS(Elemwise, "scalar_op", "cast_to", "program", "inplace_pattern");

OpAttrs Elemwise::Attrs() const {
  OpAttrs a{{"scalar_op", ScalarOpName(scalar_op_.kind)}};
  if (scalar_op_.kind == ScalarOpKind::kCast) a.Set("cast_to", DTypeName(scalar_op_.cast_to));
  if (scalar_op_.kind == ScalarOpKind::kComposite) {
    a.Set("program", EncodeScalarProgram(*scalar_op_.program));
  }
  std::vector<int64_t> pattern;
  for (const auto& [o, i] : inplace_pattern_) {
    pattern.push_back(o);
    pattern.push_back(i);
  }
  if (!pattern.empty()) a.Set("inplace_pattern", pattern);
  return a;
}

absl::StatusOr<OpPtr> Elemwise::FromAttrs(const OpAttrs& a) {
  ASSIGN_OR_RETURN(std::string name, a.String("scalar_op"));
  std::optional<ScalarOpKind> k = ParseScalarOpKind(name);
  if (!k) return absl::InvalidArgumentError(absl::StrCat("unknown scalar op '", name, "'"));
  ScalarOp op(*k);
  if (*k == ScalarOpKind::kCast) {
    absl::StatusOr<DType> to = DecodeAttr<DType>(a, "cast_to");
    if (!to.ok()) return to.status();
    op.cast_to = *to;
  }
  if (*k == ScalarOpKind::kComposite) {
    absl::StatusOr<std::string> text = a.String("program");
    if (!text.ok()) return text.status();
    absl::StatusOr<std::shared_ptr<const ScalarProgram>> p = DecodeScalarProgram(*text);
    if (!p.ok()) return p.status();
    op.program = *p;
  }
  absl::StatusOr<std::optional<std::vector<int>>> flat =
      DecodeAttr<std::optional<std::vector<int>>>(a, "inplace_pattern");
  if (!flat.ok() || flat->value_or(std::vector<int>{}).size() % 2 != 0) {
    return absl::InvalidArgumentError("bad inplace_pattern");
  }
  InplacePattern pattern;
  const std::vector<int> pairs = flat->value_or(std::vector<int>{});
  for (size_t i = 0; i < pairs.size(); i += 2) pattern.push_back({pairs[i], pairs[i + 1]});
  return Make(op, pattern);
}

}  // namespace kiln
