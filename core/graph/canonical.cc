#include "core/graph/canonical.h"

#include <openssl/evp.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/op.h"
#include "core/graph/structural_names.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// Bytes past which a constant appears in the form by its digest.
constexpr size_t kConstantBytesInForm = 64;

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
  // Leaves are inputs (named by position and type) and constants (by type, shape and bytes); a
  // node is its op's key applied to its inputs' names.
  std::string form;
  StructuralNames names(
      [](const Variable& v) -> absl::StatusOr<std::string> {
        if (!v.is_constant()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "MissingInputError: ", v.ToString(), " is needed but is not among the inputs"));
        }
        const Tensor data = static_cast<const Constant&>(v).data().Contiguous();
        const std::string_view bytes(static_cast<const char*>(data.raw_data()),
                                     static_cast<size_t>(data.nbytes()));
        // A large constant by its bytes' SHA-256 (a model's 2 MB matrix would be 4 MB of hex
        // to hash, keep and compare on every compile), a small one by its bytes.
        return absl::StrCat("const:", v.type()->ToString(), ":", ShapeToString(data.shape()), ":",
                            bytes.size() > kConstantBytesInForm
                                ? absl::StrCat("sha256:", Sha256Hex(bytes))
                                : absl::BytesToHexString(absl::string_view(bytes.data(),
                                                                           bytes.size())));
      },
      [](const Apply& node, std::span<const std::string* const> inputs) {
        std::string def = absl::StrCat(node.op().Key(), "(");
        for (const std::string* in : inputs) absl::StrAppend(&def, *in, ",");
        absl::StrAppend(&def, ")");
        return def;
      },
      [&](int k, const std::string& def) { absl::StrAppend(&form, "n", k, " = ", def, "\n"); });
  for (size_t i = 0; i < ins.size(); ++i) {
    names.Preset(ins[i].get(), absl::StrCat("in", i, ":", ins[i]->type()->ToString()));
  }
  std::vector<std::string> outs;
  for (const Var& v : outputs) {
    if (!v.ok()) return v.status();
    ASSIGN_OR_RETURN(std::string name, names.NameOf(v.ptr().get()));
    outs.push_back(name);
  }
  CanonicalGraph g;
  g.form =
      absl::StrCat("inputs ", ins.size(), "\n", form, "outputs ", absl::StrJoin(outs, ","), "\n");
  g.id = Sha256Hex(absl::StrCat(g.form, "\nsalt ", absl::string_view(salt.data(), salt.size())));
  return g;
}

}  // namespace kiln
