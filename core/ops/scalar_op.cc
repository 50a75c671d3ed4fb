#include "core/ops/scalar_op.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"
#include "core/ops/composite.h"

namespace kiln {
namespace {

struct ScalarOpInfo {
  const char* name;
  int arity;
  DTypeRule rule;
  bool complex_ok;
  ScalarAlgebra algebra;
  const char* symbol;
  bool pp_symbol;
};

constexpr ScalarOpInfo kScalarOps[] = {
#define KILN_SCALAR_OP_INFO(e, name, arity, rule, complex_ok, algebra, builder, symbol, pp, unit) \
  {name, arity, DTypeRule::rule, complex_ok, algebra, symbol, pp},
    KILN_SCALAR_OPS(KILN_SCALAR_OP_INFO)
#undef KILN_SCALAR_OP_INFO
};

const ScalarOpInfo& Info(ScalarOpKind op) { return kScalarOps[static_cast<int>(op)]; }

DType Promote(std::span<const DType> dtypes) {
  DType result = dtypes[0];
  for (DType d : dtypes.subspan(1)) result = PromoteTypes(result, d);
  return result;
}

DType RealPart(DType d) {
  if (d == DType::kComplex64) return DType::kFloat32;
  if (d == DType::kComplex128) return DType::kFloat64;
  return d;
}

absl::Status Unsupported(const ScalarOp& op, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(op.Name(), " is not defined for ", std::string(what)));
}

}  // namespace

int NumScalarOps() { return static_cast<int>(std::size(kScalarOps)); }

int ScalarOpArity(ScalarOpKind op) { return Info(op).arity; }

const char* ScalarOpSymbol(ScalarOpKind op) { return Info(op).symbol; }

bool PpPrintsSymbol(ScalarOpKind op) { return Info(op).pp_symbol; }

const ScalarAlgebra& ScalarOpAlgebra(ScalarOpKind op) { return Info(op).algebra; }

std::string ScalarOpName(ScalarOpKind op) { return Info(op).name; }

std::optional<ScalarOpKind> ParseScalarOpKind(const std::string& name) {
  for (int i = 0; i < NumScalarOps(); ++i) {
    if (name == kScalarOps[i].name) return static_cast<ScalarOpKind>(i);
  }
  return std::nullopt;
}

bool ScalarOp::operator==(const ScalarOp& o) const {
  if (kind != o.kind) return false;
  if (kind == ScalarOpKind::kCast) return cast_to == o.cast_to;
  if (kind == ScalarOpKind::kComposite) return *program == *o.program;
  return true;
}

std::string ScalarOp::Name() const {
  if (kind == ScalarOpKind::kCast) return absl::StrCat("Cast{", DTypeName(cast_to), "}");
  if (kind == ScalarOpKind::kComposite) return absl::StrCat("Composite{", program->ToString(), "}");
  return Info(kind).name;
}

std::string ScalarOp::ElemwiseName() const {
  switch (kind) {
    case ScalarOpKind::kCast:
    case ScalarOpKind::kIdentity:
    case ScalarOpKind::kComposite:
      return absl::StrCat("Elemwise{", Name(), "}");
    case ScalarOpKind::kMaximum:
    case ScalarOpKind::kMinimum:
      return absl::StrCat("Elemwise{scalar_", Name(), ",no_inplace}");
    case ScalarOpKind::kXlogX:  // aesara.tensor.xlogx's Elemwise, named
    case ScalarOpKind::kXlogY0:
      return Name();
    default:
      return absl::StrCat("Elemwise{", Name(), ",no_inplace}");
  }
}

absl::StatusOr<DType> ScalarOutputDType(const ScalarOp& op, std::span<const DType> inputs) {
  if (inputs.empty()) return absl::InvalidArgumentError("no inputs");
  const ScalarOpInfo& info = Info(op.kind);
  if (!info.complex_ok) {
    for (DType d : inputs) {
      if (IsComplex(d)) return Unsupported(op, DTypeName(d));
    }
  }
  const DType upcast = Promote(inputs);
  switch (info.rule) {
    case DTypeRule::kUpcast:
      return upcast;
    case DTypeRule::kUpcastNoBool:
    case DTypeRule::kSameNoBool:
      if (upcast == DType::kBool) return Unsupported(op, "bool; cast to an integer first");
      return upcast;
    case DTypeRule::kUpcastMin8:
    case DTypeRule::kSameMin8:
      return upcast == DType::kBool ? DType::kInt8 : upcast;
    case DTypeRule::kTrueDiv: {
      bool all_discrete = true;
      for (DType d : inputs) all_discrete &= IsBool(d) || IsInteger(d);
      return all_discrete ? kFloatX : upcast;
    }
    case DTypeRule::kUpgradeToFloat: {
      DType result = UpgradeToFloat(inputs[0]);
      for (DType d : inputs.subspan(1)) result = PromoteTypes(result, UpgradeToFloat(d));
      return result;
    }
    case DTypeRule::kSame:
      return upcast;
    case DTypeRule::kSameFloatOnly:
      if (!IsFloat(upcast))
        return Unsupported(op, absl::StrCat(DTypeName(upcast), "; only floats"));
      return upcast;
    case DTypeRule::kBool:
      return DType::kBool;
    case DTypeRule::kBitwise: {
      size_t bools = 0;
      for (DType d : inputs) {
        if (!IsBool(d) && !IsInteger(d)) return Unsupported(op, DTypeName(d));
        bools += IsBool(d);
      }
      if (bools > 0 && bools < inputs.size()) {
        return Unsupported(op, "bool mixed with integers; cast first");
      }
      return upcast;
    }
    case DTypeRule::kBranches:
      return PromoteTypes(inputs[1], inputs[2]);
    case DTypeRule::kSecondInput:
      return inputs[1];
    case DTypeRule::kRealPart:
      return RealPart(upcast);
    case DTypeRule::kFloat64:
      return DType::kFloat64;
    case DTypeRule::kProgram: {
      if (inputs.size() != op.program->input_dtypes.size() ||
          !std::equal(inputs.begin(), inputs.end(), op.program->input_dtypes.begin())) {
        std::string wanted;
        for (DType d : op.program->input_dtypes)
          absl::StrAppend(&wanted, wanted.empty() ? "" : ", ", DTypeName(d));
        return absl::InvalidArgumentError(absl::StrCat("the composite takes (", wanted, ")"));
      }
      return op.program->RegisterDType(op.program->outputs[0]);
    }
    case DTypeRule::kCast:
      if (IsComplex(inputs[0]) && !IsComplex(op.cast_to)) {
        return absl::InvalidArgumentError(
            "Casting from complex to real is ambiguous: consider real(), imag(), angle() or "
            "abs()");
      }
      return op.cast_to;
  }
  return upcast;
}

}  // namespace kiln
