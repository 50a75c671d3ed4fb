#include "core/graph/attr_text.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace kiln {

absl::StatusOr<OpAttrs> ParseAttrText(absl::string_view text) {
  OpAttrs attrs;
  auto bad = [&] { return absl::InvalidArgumentError("malformed attribute text"); };
  while (!text.empty()) {
    const size_t eq = text.find('=');
    if (eq == absl::string_view::npos || eq == 0 || eq + 1 >= text.size()) return bad();
    std::string key(text.substr(0, eq));
    const char tag = text[eq + 1];
    text.remove_prefix(eq + 2);
    if (tag == 's') {
      const size_t colon = text.find(':');
      size_t n = 0;
      if (colon == absl::string_view::npos || !absl::SimpleAtoi(text.substr(0, colon), &n) ||
          n > text.size() - colon - 1) {
        return bad();
      }
      attrs.Set(std::move(key), std::string(text.substr(colon + 1, n)));
      text.remove_prefix(colon + 1 + n);
      if (text.empty() || text[0] != ';') return bad();
      text.remove_prefix(1);
      continue;
    }
    const size_t semi = text.find(';');
    if (semi == absl::string_view::npos) return bad();
    absl::string_view value = text.substr(0, semi);
    text.remove_prefix(semi + 1);
    if (tag == 'i') {
      int64_t v;
      if (!absl::SimpleAtoi(value, &v)) return bad();
      attrs.Set(std::move(key), v);
    } else if (tag == 'f') {
      const std::string bytes = absl::HexStringToBytes(value);
      double d;
      if (value.size() != 16 || bytes.size() != sizeof d) return bad();
      std::memcpy(&d, bytes.data(), sizeof d);
      attrs.Set(std::move(key), d);
    } else if (tag == 'l') {
      if (value.size() < 2 || value.front() != '[' || value.back() != ']') return bad();
      std::vector<int64_t> list;
      value = value.substr(1, value.size() - 2);
      if (!value.empty()) {
        for (absl::string_view part : absl::StrSplit(value, ',')) {
          int64_t v;
          if (!absl::SimpleAtoi(part, &v)) return bad();
          list.push_back(v);
        }
      }
      attrs.Set(std::move(key), std::move(list));
    } else {
      return bad();
    }
  }
  return attrs;
}

}  // namespace kiln
