// merge: identical subgraphs and equal constants computed once.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "core/tensor/status_macros.h"
#include "core/passes/passes.h"

namespace kiln {
namespace {

// Bytes of a constant's value that its hash reads at each end: a large constant is hashed by
// its ends alone (equal values still hash alike; values that differ only inside are told apart
// by SameConstant), so that each pass does not read, or copy, megabytes per constant.
constexpr int64_t kHashedEndBytes = 256;

// Hashes a constant by its type, shape and the bytes at the ends of its value.
struct ConstantHash {
  size_t operator()(const Constant* c) const {
    const Tensor t = c->data().Contiguous();
    const std::string_view bytes(static_cast<const char*>(t.raw_data()),
                                 static_cast<size_t>(t.nbytes()));
    const size_t end = static_cast<size_t>(std::min<int64_t>(t.nbytes(), kHashedEndBytes));
    return absl::HashOf(c->type()->ToString(), t.shape(), bytes.size(), bytes.substr(0, end),
                        bytes.substr(bytes.size() - end));
  }
};

// Equal constants: the same type, and the same value bit for bit.
struct SameConstant {
  bool operator()(const Constant* a, const Constant* b) const {
    return a == b ||
           (a->type()->ToString() == b->type()->ToString() && a->data().BitwiseEquals(b->data()));
  }
};

}  // namespace

// f(a, b) and f(a, b) -> one f(a, b); TensorConstant{2.0} twice -> one constant.
absl::StatusOr<bool> MergePass(FunctionGraph& fg, RewriteContext& ctx) {
  std::vector<Apply*> order = fg.Toposort();
  bool changed = false;
  // Constants first: every use of an equal constant goes to the first one seen.
  absl::flat_hash_map<const Constant*, VariablePtr, ConstantHash, SameConstant> constants;
  for (Apply* node : order) {
    for (int i = 0; i < node->num_inputs(); ++i) {
      const VariablePtr& in = node->inputs()[i];
      if (!in->is_constant()) continue;
      auto [it, inserted] = constants.emplace(static_cast<const Constant*>(in.get()), in);
      if (!inserted && it->second != in) {
        RETURN_IF_ERROR(fg.Replace(in.get(), it->second, "merge"));
        changed = true;
        if (ctx.options().trace) ctx.report().trace.push_back({"merge", in->ToString()});
        ++ctx.report().rules["merge"].count;
      }
    }
  }
  // Then nodes, in order: equal ops on the same inputs are the same node.
  struct Key {
    const Op* op;
    std::vector<const Variable*> inputs;
    bool operator==(const Key& o) const { return *op == *o.op && inputs == o.inputs; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return absl::HashOf(k.op->Hash(), k.inputs); }
  };
  absl::flat_hash_map<Key, Apply*, KeyHash> seen;
  for (Apply* node : fg.Toposort()) {
    if (!fg.Contains(node) || !node->op().destroy_map().empty()) continue;
    Key key{&node->op(), {}};
    for (const VariablePtr& in : node->inputs()) key.inputs.push_back(in.get());
    auto [it, inserted] = seen.emplace(key, node);
    if (inserted) continue;
    RETURN_IF_ERROR(ctx.Apply(fg, "merge", *node, it->second->outputs()));
    changed = true;
  }
  return changed;
}

}  // namespace kiln
