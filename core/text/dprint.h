// dprint: Aesara's debugprint text of a graph, line for line.
#ifndef KILN_CORE_TEXT_DPRINT_H_
#define KILN_CORE_TEXT_DPRINT_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "core/graph/var.h"

namespace kiln {

// How dprint names the variables it prints.
enum class DprintIds {
  kChar,  // [id A], [id B], ... [id Z], [id BA] (Aesara's default)
  kInt,   // [id 0], [id 1], ...
  kNone,  // no ids
};

struct DprintOptions {
  // Append each variable's type: "x [id B] <TensorType(float64, (?, ?))>".
  bool print_type = false;
  DprintIds ids = DprintIds::kChar;
  // Levels to print below each output; -1 for all.
  int depth = -1;
  // Do not print below a named intermediate variable.
  bool stop_on_name = false;
  // Levels of indentation before a subtree is cut: its node's line ends with " ..." and the node
  // is printed again with its inputs as a block of its own below, so that the text stays linear
  // in the graph's size however deep it is. -1 never cuts (quadratic text for a long chain).
  int max_nesting = 100;
  // End each node's line with its position in Aesara's toposort of the printed graph, as dprint
  // of a compiled function does: "Shape_i{1} [id D] 0".
  bool print_order = false;
};

// The debugprint of the outputs, sharing one id space: one line per variable, children indented
// with " |" prefixes, a node reached twice printed again with its id but without its inputs, and a
// subtree deeper than max_nesting continued in a block of its own.
std::string DebugPrint(const std::vector<Var>& outputs, const DprintOptions& options = {});

// Prints DebugPrint(outputs) to standard output (Aesara's dprint).
void dprint(const Var& output, const DprintOptions& options = {});
void dprint(const std::vector<Var>& outputs, const DprintOptions& options = {});

// Aesara's id letters: 0 -> "A", 25 -> "Z", 26 -> "BA".
std::string CharId(int number);

}  // namespace kiln

#endif  // KILN_CORE_TEXT_DPRINT_H_
