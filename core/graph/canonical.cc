#include "core/graph/canonical.h"

#include <openssl/evp.h>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/op.h"
#include "core/graph/status_macros.h"

namespace kiln {
namespace {

class Canonicalizer {
 public:
  Canonicalizer(const std::vector<VariablePtr>& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      ids_[inputs[i].get()] = absl::StrCat("in", i, ":", inputs[i]->type()->ToString());
    }
  }

  // The structural name of v: an input position, a constant's bytes, or a node number and
  // output index; each distinct node is written to the form once, after its inputs.
  absl::StatusOr<std::string> Name(const Variable* v) {
    if (auto it = ids_.find(v); it != ids_.end()) return it->second;
    if (v->is_constant()) {
      const Tensor data = static_cast<const Constant&>(*v).data().Contiguous();
      std::string name =
          absl::StrCat("const:", v->type()->ToString(), ":", ShapeToString(data.shape()), ":",
                       absl::BytesToHexString(absl::string_view(
                           static_cast<const char*>(data.raw_data()), data.nbytes())));
      return ids_[v] = name;
    }
    const Apply* node = v->owner();
    if (node == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("MissingInputError: ", v->ToString(),
                                                     " is needed but is not among the inputs"));
    }
    // Iterative depth-first walk over inputs before the node, in input order.
    struct Frame {
      const Apply* node;
      int next;
    };
    std::vector<Frame> stack = {{node, 0}};
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (node_ids_.count(f.node)) {
        stack.pop_back();
        continue;
      }
      if (f.next < f.node->num_inputs()) {
        const Variable* in = f.node->inputs()[f.next++].get();
        if (ids_.count(in)) continue;
        if (in->is_constant() || in->owner() == nullptr) {
          ASSIGN_OR_RETURN(std::string leaf, Name(in));
          continue;
        }
        stack.push_back({in->owner(), 0});
        continue;
      }
      // Every input named: the node's definition, deduplicated by its text.
      std::string def = absl::StrCat(f.node->op().Key(), "(");
      for (const VariablePtr& in : f.node->inputs()) absl::StrAppend(&def, ids_.at(in.get()), ",");
      absl::StrAppend(&def, ")");
      auto [it, inserted] = defs_.emplace(def, static_cast<int>(defs_.size()));
      if (inserted) absl::StrAppend(&form_, "n", it->second, " = ", def, "\n");
      node_ids_[f.node] = it->second;
      for (int o = 0; o < f.node->num_outputs(); ++o) {
        ids_[f.node->output_ptr(o)] = absl::StrCat("n", it->second, ".", o);
      }
      stack.pop_back();
    }
    return ids_.at(v);
  }

  std::string& form() { return form_; }

 private:
  absl::flat_hash_map<const Variable*, std::string> ids_;
  absl::flat_hash_map<const Apply*, int> node_ids_;
  absl::flat_hash_map<std::string, int> defs_;
  std::string form_;
};

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), size));
}

absl::StatusOr<CanonicalGraph> Canonicalize(const std::vector<Var>& inputs,
                                            const std::vector<Var>& outputs,
                                            std::string_view salt) {
  std::vector<VariablePtr> ins;
  for (const Var& v : inputs) {
    if (!v.ok()) return v.status();
    ins.push_back(v.ptr());
  }
  Canonicalizer c(ins);
  std::vector<std::string> outs;
  for (const Var& v : outputs) {
    if (!v.ok()) return v.status();
    ASSIGN_OR_RETURN(std::string name, c.Name(v.ptr().get()));
    outs.push_back(name);
  }
  CanonicalGraph g;
  g.form = absl::StrCat("inputs ", ins.size(), "\n", c.form(), "outputs ", absl::StrJoin(outs, ","),
                        "\n");
  g.id = Sha256Hex(absl::StrCat(g.form, "\nsalt ", absl::string_view(salt.data(), salt.size())));
  return g;
}

}  // namespace kiln
