// in-place: an Elemwise writes its output into the buffer of an input that nothing else needs,
// never into a graph input, a constant or anything they share memory with.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ops/elemwise.h"
#include "core/ops/linalg.h"
#include "core/passes/passes.h"
#include "core/tensor/status_macros.h"

namespace kiln {
namespace {

// The input whose buffer v's node writes v into or views as v, or null.
const Variable* Aliased(const Variable& v) {
  const Apply* node = v.owner();
  if (node == nullptr) return nullptr;
  const Variable* aliased = nullptr;
  for (const auto& pairs : {node->op().view_map(), node->op().destroy_map()}) {
    for (const auto& [out, in] : pairs) {
      if (out == v.index()) aliased = node->inputs()[in].get();
    }
  }
  return aliased;
}

// True when overwriting v's buffer could change anything but v: v may be, or be a view of, a
// graph input, a graph output or a constant, or some variable on its view chain has another use.
// Memoized in *known: a chain of n in-place nodes is walked once, not n times.
bool Protected(const FunctionGraph& fg, const std::unordered_set<const Variable*>& io,
               const Variable* v, std::unordered_map<const Variable*, bool>& known) {
  std::vector<const Variable*> chain;
  bool result = false;
  for (;; v = Aliased(*v)) {
    if (v == nullptr) break;  // the chain ends in a computed buffer nothing else reads
    if (auto it = known.find(v); it != known.end()) {
      result = it->second;
      break;
    }
    chain.push_back(v);
    if (v->is_constant() || io.count(v) || fg.clients(v).size() != 1 || v->owner() == nullptr) {
      result = true;
      break;
    }
  }
  for (const Variable* c : chain) known[c] = result;
  return result;
}

}  // namespace

// Elemwise{add,no_inplace}(t, u) -> Elemwise{Add}[(0, 0)](t, u) when t is an intermediate of
// the output's type used by this node alone (and not a graph output); Gemm and Gemv likewise
// into their z / y.
absl::StatusOr<bool> InplacePass(FunctionGraph& fg, RewriteContext& ctx) {
  bool changed = false;
  std::unordered_set<const Variable*> io;
  std::unordered_map<const Variable*, bool> known;  // Protected's memo
  for (const VariablePtr& o : fg.outputs()) io.insert(o.get());
  for (const VariablePtr& i : fg.inputs()) io.insert(i.get());
  // Input i may be overwritten by node's output: it has the output's type, the node reads it
  // once (a second operand would be read after the write) and nothing else needs it.
  auto destroyable = [&](const Apply& node, int i) {
    const VariablePtr& in = node.inputs()[i];
    const int uses = static_cast<int>(std::count(node.inputs().begin(), node.inputs().end(), in));
    return uses == 1 && in->type()->Equals(*node.output_ptr(0)->type()) &&
           !Protected(fg, io, in.get(), known);
  };
  for (Apply* node : fg.Toposort()) {
    const std::vector<Var> inputs(node->inputs().begin(), node->inputs().end());
    const bool gemm = node->op().Is<Gemm>();
    // Gemm{no_inplace}(z, ...) -> Gemm{inplace}(z, ...), and Gemv.
    if ((gemm || node->op().Is<Gemv>()) && node->op().destroy_map().empty()) {
      if (!destroyable(*node, 0)) continue;
      const OpPtr inplace = gemm
                                ? OpPtr(std::make_shared<Gemm>(InplaceAttrs{true}))
                                : OpPtr(std::make_shared<Gemv>(InplaceAttrs{true}));
      const Var replaced = ApplyOp(inplace, inputs);
      if (!replaced.ok()) continue;
      RETURN_IF_ERROR(ctx.Apply(fg, "inplace_gemm", *node, {replaced.ptr()}));
      changed = true;
      continue;
    }
    if (!node->op().Is<Elemwise>() || node->num_outputs() != 1) continue;
    const auto& op = static_cast<const Elemwise&>(node->op());
    if (!op.inplace_pattern().empty()) continue;
    // An n-ary add or mul folds its third and later operands into the output after the first
    // write: only operands 0 and 1 may share the output's buffer.
    const int candidates = op.scalar_op().kind == ScalarOpKind::kComposite
                               ? node->num_inputs()
                               : std::min(2, node->num_inputs());
    for (int i = 0; i < candidates; ++i) {
      if (!destroyable(*node, i)) continue;
      const Var replaced = ApplyOp(Elemwise::Make(op.scalar_op(), {{0, i}}), inputs);
      if (!replaced.ok()) break;
      RETURN_IF_ERROR(ctx.Apply(fg, "inplace_elemwise", *node, {replaced.ptr()}));
      changed = true;
      break;
    }
  }
  return changed;
}

}  // namespace kiln
