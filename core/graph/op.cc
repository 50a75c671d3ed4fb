#include "core/graph/op.h"

#include <atomic>

#include "core/graph/gradient_types.h"

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace kiln {

OpClassId NewOpClassId() {
  static std::atomic<int> next{0};
  return static_cast<OpClassId>(next.fetch_add(1));
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
