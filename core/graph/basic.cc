#include "core/graph/basic.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/tensor/check.h"
#include "core/graph/op.h"

namespace kiln {

VariablePtr Variable::Make(TypePtr type, std::string name) {
  return VariablePtr(new Variable(std::move(type), nullptr, 0, std::move(name)));
}

std::string Variable::ToString() const {
  if (!name_.empty()) return name_;
  if (owner_ != nullptr) {
    return absl::StrCat(owner_->op().Name(), ".", index_);
  }
  return absl::StrCat("<", type_->ToString(), ">");
}

VariablePtr Variable::CloneDetached() const { return Make(type_, name_); }

std::shared_ptr<Constant> Constant::Make(TypePtr type, Tensor data, std::string name) {
  if (const auto* tt = dynamic_cast<const TensorType*>(type.get())) {
    KILN_CHECK(tt->dtype() == data.dtype())
        << "constant data of dtype " << DTypeName(data.dtype()) << " for " << tt->ToString();
    KILN_CHECK(tt->ndim() == data.ndim()) << "constant data rank for " << tt->ToString();
    for (int d = 0; d < tt->ndim(); ++d) {
      KILN_CHECK(!tt->shape()[d] || *tt->shape()[d] == data.shape()[d])
          << "constant data of shape " << ShapeToString(data.shape()) << " for " << tt->ToString();
    }
  }
  return std::shared_ptr<Constant>(new Constant(std::move(type), std::move(data), std::move(name)));
}

absl::StatusOr<std::shared_ptr<Constant>> Constant::MakeChecked(TypePtr type, Tensor data,
                                                                std::string name) {
  const auto* tt = dynamic_cast<const TensorType*>(type.get());
  bool fits = tt != nullptr && tt->dtype() == data.dtype() && tt->ndim() == data.ndim();
  for (int d = 0; fits && d < tt->ndim(); ++d) {
    fits = !tt->shape()[d] || *tt->shape()[d] == data.shape()[d];
  }
  if (!fits) {
    return absl::InvalidArgumentError(absl::StrCat("a value of dtype ", DTypeName(data.dtype()),
                                                   " and shape ", ShapeToString(data.shape()),
                                                   " does not have type ", type->ToString()));
  }
  return Make(std::move(type), std::move(data), std::move(name));
}

std::shared_ptr<Constant> Constant::FromTensor(Tensor data, std::string name) {
  StaticShape shape(data.shape().begin(), data.shape().end());
  TypePtr type = TensorType::Make(data.dtype(), std::move(shape));
  return Make(std::move(type), std::move(data), std::move(name));
}

std::string Constant::ToString() const {
  if (!name().empty()) return name();
  const int64_t n = data_.size();
  std::string value;
  // A non-empty array of equal elements prints as "(3,) of 1.0", as Aesara does.
  bool all_equal = data_.ndim() > 0 && n > 0;
  if (all_equal) {
    const Tensor flat = data_.Contiguous();
    const int size = DTypeSize(flat.dtype());
    const char* bytes = static_cast<const char*>(flat.raw_data());
    for (int64_t i = 1; i < n && all_equal; ++i) {
      all_equal = std::memcmp(bytes, bytes + i * size, size) == 0;
    }
  }
  if (all_equal) {
    value = absl::StrCat(ShapeToString(data_.shape()), " of ", data_.View({}, {}).ToString());
  } else {
    value = data_.ToString();
  }
  if (value.size() > 20)
    value = absl::StrCat(value.substr(0, 10), "..", value.substr(value.size() - 10));
  return absl::StrCat("TensorConstant{", value, "}");
}

VariablePtr Constant::CloneDetached() const { return Make(type(), data_, name()); }

ApplyPtr Apply::Make(OpPtr op, std::vector<VariablePtr> inputs,
                     const std::vector<TypePtr>& output_types) {
  for (const VariablePtr& in : inputs) KILN_CHECK(in != nullptr) << "null input to " << op->Name();
  ApplyPtr node(new Apply(std::move(op), std::move(inputs)));
  for (size_t i = 0; i < output_types.size(); ++i) {
    node->outputs_.push_back(std::unique_ptr<Variable>(
        new Variable(output_types[i], node.get(), static_cast<int>(i), "")));
  }
  return node;
}

Apply::~Apply() {
  // The outermost destructor drains a worklist; nested ones (nodes freed by it) only add to it.
  static thread_local std::vector<VariablePtr>* pending = nullptr;
  if (pending != nullptr) {
    for (VariablePtr& in : inputs_) pending->push_back(std::move(in));
    return;
  }
  std::vector<VariablePtr> work = std::move(inputs_);
  pending = &work;
  while (!work.empty()) {
    VariablePtr v = std::move(work.back());
    work.pop_back();
    v.reset();
  }
  pending = nullptr;
}

VariablePtr Apply::output(int i) const {
  KILN_CHECK(i >= 0 && i < num_outputs()) << "output " << i << " of " << op_->Name();
  return VariablePtr(std::const_pointer_cast<Apply>(shared_from_this()), outputs_[i].get());
}

std::vector<VariablePtr> Apply::outputs() const {
  std::vector<VariablePtr> result;
  for (int i = 0; i < num_outputs(); ++i) result.push_back(output(i));
  return result;
}

std::string Apply::ToString() const {
  return absl::StrCat(op_->Name(), "(",
                      absl::StrJoin(inputs_, ", ",
                                    [](std::string* out, const VariablePtr& v) {
                                      absl::StrAppend(out, v->ToString());
                                    }),
                      ")");
}

}  // namespace kiln
