// OpAttrs::Text() read back: the attributes of an op in an inner graph's text, or of a Blockwise's
// core op.
#ifndef KILN_CORE_GRAPH_ATTR_TEXT_H_
#define KILN_CORE_GRAPH_ATTR_TEXT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/op_attrs.h"

namespace kiln {

// "key=i2;key=f<hex>;key=s5:hello;key=l[1,2];" as OpAttrs, or INVALID_ARGUMENT ("malformed
// attribute text").
absl::StatusOr<OpAttrs> ParseAttrText(absl::string_view text);

}  // namespace kiln

#endif  // KILN_CORE_GRAPH_ATTR_TEXT_H_
