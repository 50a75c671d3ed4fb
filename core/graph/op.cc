#include "core/graph/op.h"

#include "core/graph/gradient_types.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace kiln {

absl::string_view OpKindName(OpKind kind) {
  switch (kind) {
#define KILN_OP_KIND_NAME(e, name) \
  case OpKind::e:                  \
    return name;
    KILN_OP_KINDS(KILN_OP_KIND_NAME)
#undef KILN_OP_KIND_NAME
    case OpKind::kDeclared:
      break;
  }
  return "?";
}

std::vector<Var> Op::LOp(const Apply& node, const std::vector<Var>& output_grads) const {
  std::vector<Var> grads;
  for (int i = 0; i < node.num_inputs(); ++i) {
    grads.push_back(grad_not_implemented(Name(), i, node.inputs()[i]));
  }
  return grads;
}

std::vector<std::vector<bool>> Op::ConnectionPattern(const Apply& node) const {
  return std::vector<std::vector<bool>>(node.num_inputs(),
                                        std::vector<bool>(node.num_outputs(), true));
}

const std::string& Op::Key() const {
  std::call_once(key_once_, [this] { key_ = absl::StrCat(type_name(), "{", Attrs().Text(), "}"); });
  return key_;
}

size_t Op::Hash() const { return absl::HashOf(Key()); }

}  // namespace kiln
