// pp: Aesara's pretty printer (aesara.printing.pp), a graph as one math-like expression.
#ifndef KILN_CORE_TEXT_PP_H_
#define KILN_CORE_TEXT_PP_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "core/graph/var.h"

namespace kiln {

struct PpOptions {
  // The longest text pp returns. A shared subexpression is written out at each use, so the
  // text of a graph can grow exponentially with its depth; past this many characters pp answers
  // RESOURCE_EXHAUSTED instead.
  size_t max_chars = size_t{1} << 20;
};

// The expression that computes `output`, written as Aesara's pp writes it: operators in full
// parentheses "((x * y) + 1.0)", Elemwise ops by their tensor function "exp(x)", "fill(x, 1.0)",
// "|x|", a transposing DimShuffle as "x.T", indexing as "x[0, 1:3]", "set_subtensor(x[i], y)",
// MakeVector as "[x, y]", Sum as "sum(x, axis=(0,))", Dot as "(x \dot y)", other ops as
// "Name(inputs)", constants as NumPy prints their value and leaves by name. Iterative, so graphs of
// any depth print.
absl::StatusOr<std::string> PrettyPrint(const Var& output, const PpOptions& options = {});

}  // namespace kiln

#endif  // KILN_CORE_TEXT_PP_H_
