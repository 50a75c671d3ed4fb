#include "core/ops/scalar_op.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/graph/constructors.h"

namespace kiln {
namespace {

struct ScalarOpInfo {
  std::string_view name;
  int arity;
  DTypeRule rule;
};

constexpr ScalarOpInfo kScalarOps[] = {
#define KILN_SCALAR_OP_INFO(e, name, arity, rule) {name, arity, rule},
    KILN_SCALAR_OPS(KILN_SCALAR_OP_INFO)
#undef KILN_SCALAR_OP_INFO
};

const ScalarOpInfo& Info(ScalarOpKind op) { return kScalarOps[static_cast<int>(op)]; }

DType Promote(std::span<const DType> dtypes) {
  DType result = dtypes[0];
  for (DType d : dtypes.subspan(1)) result = PromoteTypes(result, d);
  return result;
}

}  // namespace

std::string ScalarOpName(ScalarOpKind op) { return std::string(Info(op).name); }

int ScalarOpArity(ScalarOpKind op) { return Info(op).arity; }

absl::StatusOr<DType> ScalarOutputDType(ScalarOpKind op, std::span<const DType> inputs) {
  if (inputs.empty()) return absl::InvalidArgumentError("no inputs");
  const DType upcast = Promote(inputs);
  switch (Info(op).rule) {
    case DTypeRule::kUpcast:
      return upcast;
    case DTypeRule::kUpcastNumeric:
      if (upcast == DType::kBool) {
        return absl::InvalidArgumentError(
            absl::StrCat(ScalarOpName(op), " is not defined for bool; cast to an integer first"));
      }
      return upcast;
    case DTypeRule::kUpcastBoolInt8:
      return upcast == DType::kBool ? DType::kInt8 : upcast;
    case DTypeRule::kTrueDiv: {
      bool all_discrete = true;
      for (DType d : inputs) all_discrete &= IsBool(d) || IsInteger(d);
      return all_discrete ? kFloatX : upcast;
    }
    case DTypeRule::kUpgradeToFloat:
      return UpgradeToFloat(upcast);
  }
  return upcast;
}

}  // namespace kiln
