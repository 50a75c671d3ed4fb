#include "core/text/dprint.h"

#include <deque>
#include <iostream>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "core/graph/inner_graph.h"
#include "core/graph/op.h"

namespace kiln {
namespace {

// One dprint run: the ids given so far and the text.
class Printer {
 public:
  Printer(const DprintOptions& options, const std::vector<Var>& outputs) : options_(options) {
    if (options.print_order) NumberInAesarasOrder(outputs);
  }

  // Prints `root` and, depth-first, what it is computed from, then the subtrees cut at
  // max_nesting as blocks of their own. Iterative, so deep graphs are fine.
  void Print(const Variable* root) {
    PrintTree(root, /*expand_seen=*/false);
    while (!cut_.empty()) {
      const Variable* v = cut_.front();
      cut_.pop_front();
      PrintTree(v, /*expand_seen=*/true);
    }
  }

  // A line for an output that could not be built.
  void PrintError(const absl::Status& status) {
    absl::StrAppend(&out_, "<error: ", status.message(), ">\n");
  }

  // Aesara's "Inner graphs:" section: each op with an inner graph met so far (nested ones too),
  // its outputs' trees prefixed " >", its inputs as "*i-<type> -> [id of the outer input]".
  void PrintInnerGraphs() {
    if (inner_nodes_.empty()) return;
    absl::StrAppend(&out_, "\nInner graphs:\n");
    for (size_t n = 0; n < inner_nodes_.size(); ++n) {
      const Variable* met = inner_nodes_[n];  // printed as Aesara does: "Op.1" when multi-output
      const Apply* node = met->owner();
      const auto& holder = dynamic_cast<const HasInnerGraph&>(node->op());
      const InnerGraph& g = holder.inner();
      for (size_t i = 0; i < g.inputs.size(); ++i) {
        const int outer = holder.OuterInputOf(static_cast<int>(i));
        std::string arrow;
        if (outer >= 0 && options_.ids != DprintIds::kNone) {
          const Variable* u = node->inputs()[outer].get();
          arrow = absl::StrCat(" ->", IdText(u->owner() ? static_cast<const void*>(u->owner())
                                                        : static_cast<const void*>(u)));
        }
        inner_input_text_[g.inputs[i].get()] = {
            absl::StrCat("*", i, "-<", g.inputs[i]->type()->ToString(), ">"), arrow};
      }
      absl::StrAppend(&out_, "\n", node->op().Name(),
                      node->num_outputs() > 1 ? absl::StrCat(".", met->index()) : "", IdText(node),
                      "\n");
      for (const VariablePtr& o : g.outputs) PrintTree(o.get(), false, " >", " >");
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  // One tree; `expand_seen` prints the inputs of a root already printed (a cut subtree).
  void PrintTree(const Variable* root, bool expand_seen, std::string prefix = "",
                 std::string child_prefix = "") {
    struct Item {
      const Variable* var;
      std::string prefix;        // printed before this line
      std::string child_prefix;  // passed on to this variable's inputs
      int depth;
    };
    std::vector<Item> stack = {{root, std::move(prefix), std::move(child_prefix), 0}};
    while (!stack.empty()) {
      Item item = std::move(stack.back());
      stack.pop_back();
      const Variable* v = item.var;
      const Apply* node = v->owner();
      if (node == nullptr) {
        auto inner = inner_input_text_.find(v);
        if (inner != inner_input_text_.end()) {
          absl::StrAppend(&out_, item.prefix, inner->second.first, IdText(v), TypeText(v),
                          inner->second.second, "\n");
        } else {
          absl::StrAppend(&out_, item.prefix, v->ToString(), IdText(v), TypeText(v), "\n");
        }
        continue;
      }
      if (dynamic_cast<const HasInnerGraph*>(&node->op()) != nullptr &&
          inner_seen_.insert(node).second) {
        inner_nodes_.push_back(v);
      }
      const bool seen = ids_.contains(node) && !(expand_seen && item.depth == 0);
      const bool stop = seen || (options_.depth >= 0 && item.depth + 1 >= options_.depth) ||
                        (options_.stop_on_name && !v->name().empty() && item.depth > 0);
      const bool cut = !stop && options_.max_nesting >= 0 && item.depth >= options_.max_nesting &&
                       node->num_inputs() > 0;
      absl::StrAppend(&out_, item.prefix, node->op().Name(),
                      node->num_outputs() > 1 ? absl::StrCat(".", v->index()) : "", IdText(node),
                      TypeText(v), v->name().empty() ? "" : absl::StrCat(" '", v->name(), "'"),
                      OrderText(node), cut ? " ..." : "", "\n");
      if (cut) cut_.push_back(v);
      if (stop || cut) continue;
      // Push inputs in reverse so that input 0 prints first.
      const int n = node->num_inputs();
      for (int i = n - 1; i >= 0; --i) {
        const bool last = i == n - 1;
        stack.push_back({node->inputs()[i].get(), item.child_prefix + " |",
                         item.child_prefix + (last ? "  " : " |"), item.depth + 1});
      }
    }
  }

  // Numbers the nodes as Aesara's io_toposort orders them (without orderings): a stack of nodes
  // from the outputs, where a node whose inputs are not all computed goes back on the stack
  // under its inputs' nodes. Each node is expanded once, so the walk is linear.
  void NumberInAesarasOrder(const std::vector<Var>& outputs) {
    std::vector<const Apply*> todo;
    for (auto it = outputs.rbegin(); it != outputs.rend(); ++it) {
      if (it->ok() && (*it)->owner() != nullptr) todo.push_back((*it)->owner());
    }
    std::unordered_set<const Apply*> expanded;
    while (!todo.empty()) {
      const Apply* node = todo.back();
      todo.pop_back();
      if (order_.contains(node)) continue;
      bool ready = true;
      for (const VariablePtr& in : node->inputs()) {
        ready = ready && (in->owner() == nullptr || order_.contains(in->owner()));
      }
      if (ready || !expanded.insert(node).second) {
        order_.emplace(node, static_cast<int>(order_.size()));
        continue;
      }
      todo.push_back(node);
      for (const VariablePtr& in : node->inputs()) {
        if (in->owner() != nullptr) todo.push_back(in->owner());
      }
    }
  }

  std::string OrderText(const Apply* node) const {
    auto it = order_.find(node);
    return it == order_.end() ? "" : absl::StrCat(" ", it->second);
  }

  // " [id X]" for a node or a leaf variable, given in the order first printed.
  std::string IdText(const void* key) {
    if (options_.ids == DprintIds::kNone) return "";
    auto [it, inserted] = ids_.try_emplace(key, static_cast<int>(ids_.size()));
    const int id = it->second;
    return absl::StrCat(" [id ", options_.ids == DprintIds::kChar ? CharId(id) : absl::StrCat(id),
                        "]");
  }

  std::string TypeText(const Variable* v) const {
    return options_.print_type ? absl::StrCat(" <", v->type()->ToString(), ">") : "";
  }

  const DprintOptions& options_;
  std::unordered_map<const void*, int> ids_;
  std::unordered_map<const Apply*, int> order_;  // print_order's numbers
  std::deque<const Variable*> cut_;  // subtrees cut at max_nesting, printed after their tree
  std::string out_;
  // Outputs of nodes with inner graphs, the first met of each node, in the order printed.
  std::vector<const Variable*> inner_nodes_;
  std::unordered_set<const Apply*> inner_seen_;
  // Inner inputs' labels and arrows to their outer inputs.
  std::unordered_map<const Variable*, std::pair<std::string, std::string>> inner_input_text_;
};

}  // namespace

std::string CharId(int number) {
  if (number == 0) return "A";
  std::string id;
  for (; number != 0; number /= 26) id.insert(id.begin(), static_cast<char>('A' + number % 26));
  return id;
}

std::string DebugPrint(const std::vector<Var>& outputs, const DprintOptions& options) {
  Printer printer(options, outputs);
  for (const Var& out : outputs) {
    if (out.ok()) {
      printer.Print(out.ptr().get());
    } else {
      printer.PrintError(out.status());
    }
  }
  printer.PrintInnerGraphs();
  return printer.Take();
}

void dprint(const Var& output, const DprintOptions& options) {
  dprint(std::vector<Var>{output}, options);
}

void dprint(const std::vector<Var>& outputs, const DprintOptions& options) {
  std::cout << DebugPrint(outputs, options) << std::flush;
}

}  // namespace kiln
