// NumPy's generalized-ufunc signatures ("(m,n),(n,k)->(m,k)"): what Blockwise reads to tell an
// input's core dims (the last ones, named) from its batch dims (the leading ones).
#ifndef KILN_CORE_OPS_BLOCKWISE_SIGNATURE_H_
#define KILN_CORE_OPS_BLOCKWISE_SIGNATURE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

// A parsed signature: per input and per output, the names of its core dims.
struct GufuncSignature {
  std::vector<std::vector<std::string>> inputs, outputs;
  // The canonical text, without spaces: "(m,n),(n,k)->(m,k)"; "()" for a scalar argument.
  std::string ToString() const;
};

// The longest signature text accepted (bytes) and the most arguments and dims per argument.
inline constexpr size_t kMaxSignatureLength = 4096;
inline constexpr size_t kMaxSignatureArgs = 64;
inline constexpr size_t kMaxCoreDims = 32;

// `text` parsed (spaces ignored), or INVALID_ARGUMENT saying what is wrong: numpy's grammar
// `args->args`, args a comma-separated list of `(dims)`, dims names of letters, digits and '_'.
absl::StatusOr<GufuncSignature> ParseGufuncSignature(absl::string_view text);

}  // namespace kiln

#endif  // KILN_CORE_OPS_BLOCKWISE_SIGNATURE_H_
