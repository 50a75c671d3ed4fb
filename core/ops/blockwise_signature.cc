#include "core/ops/blockwise_signature.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace {

// INVALID_ARGUMENT for `text` with the reason.
absl::Status Bad(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("not a valid gufunc signature: '", text, "' (", why, ")"));
}

// Parses "(a,b),(c)" at `pos` of `s` into `args`; stops at the end or at "->".
absl::Status ParseArgs(absl::string_view text, const std::string& s, size_t& pos,
                       std::vector<std::vector<std::string>>& args) {
  while (true) {
    if (pos >= s.size() || s[pos] != '(') return Bad(text, "expected '('");
    ++pos;
    std::vector<std::string> dims;
    if (pos < s.size() && s[pos] == ')') {
      ++pos;
    } else {
      while (true) {
        const size_t start = pos;
        while (pos < s.size() &&
               (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) {
          ++pos;
        }
        if (pos == start) return Bad(text, "expected a dimension name");
        dims.push_back(s.substr(start, pos - start));
        if (dims.size() > kMaxCoreDims) return Bad(text, "too many core dimensions");
        if (pos < s.size() && s[pos] == ',') {
          ++pos;
          continue;
        }
        if (pos < s.size() && s[pos] == ')') {
          ++pos;
          break;
        }
        return Bad(text, "expected ',' or ')'");
      }
    }
    args.push_back(std::move(dims));
    if (args.size() > kMaxSignatureArgs) return Bad(text, "too many arguments");
    if (pos < s.size() && s[pos] == ',') {
      ++pos;
      continue;
    }
    return absl::OkStatus();
  }
}

// "(m,n)".
std::string ArgText(const std::vector<std::string>& dims) {
  return absl::StrCat("(", absl::StrJoin(dims, ","), ")");
}

}  // namespace

std::string GufuncSignature::ToString() const {
  std::vector<std::string> in, out;
  for (const auto& d : inputs) in.push_back(ArgText(d));
  for (const auto& d : outputs) out.push_back(ArgText(d));
  return absl::StrCat(absl::StrJoin(in, ","), "->", absl::StrJoin(out, ","));
}

absl::StatusOr<GufuncSignature> ParseGufuncSignature(absl::string_view text) {
  if (text.size() > kMaxSignatureLength) {
    return absl::InvalidArgumentError(absl::StrCat("not a valid gufunc signature: its length ",
                                                   text.size(), " is over ", kMaxSignatureLength));
  }
  std::string s;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) s.push_back(c);
  }
  GufuncSignature sig;
  size_t pos = 0;
  if (absl::Status st = ParseArgs(text, s, pos, sig.inputs); !st.ok()) return st;
  if (s.compare(pos, 2, "->") != 0) return Bad(text, "expected '->'");
  pos += 2;
  if (absl::Status st = ParseArgs(text, s, pos, sig.outputs); !st.ok()) return st;
  if (pos != s.size()) return Bad(text, "unexpected text after the outputs");
  return sig;
}

}  // namespace kiln
