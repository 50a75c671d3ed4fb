#include "core/text/pp.h"

#include <limits>
#include <span>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/op.h"
#include "core/graph/op_decl.h"
#include "core/tensor/status_macros.h"
#include "core/ops/dimshuffle.h"
#include "core/ops/elemwise.h"
#include "core/ops/indexing.h"
#include "core/ops/op_util.h"
#include "core/ops/reduce.h"
#include "core/ops/shape.h"
#include "core/ops/linalg.h"
#include "core/ops/alloc.h"

namespace kiln {
namespace {

// The tensor function Aesara's pp names an Elemwise by: "exp", "fill", "scalar_maximum".
std::string FunctionName(const ScalarOp& op) {
  switch (op.kind) {
    case ScalarOpKind::kSecond:
      return "fill";
    case ScalarOpKind::kMaximum:
      return "scalar_maximum";
    case ScalarOpKind::kMinimum:
      return "scalar_minimum";
    case ScalarOpKind::kSqr:
      return "square";
    case ScalarOpKind::kCast:
      return DTypeName(op.cast_to);
    default:
      return ScalarOpName(op.kind);
  }
}

// Aesara's greek leaf names: a variable named "alpha" prints as "\alpha".
std::string LeafText(const Variable& v) {
  for (const char* greek : {"alpha", "beta", "gamma", "delta", "epsilon"}) {
    if (v.name() == greek) return absl::StrCat("\\", greek);
  }
  if (v.is_constant() && v.name().empty()) {
    return static_cast<const Constant&>(v).data().ToString();
  }
  return v.ToString();
}

// A variable's text as pieces: literal text, and the texts of other variables by reference, so
// that building every variable's text costs the graph's size, not the text's.
struct Piece {
  std::string text;
  const Variable* ref = nullptr;
};
using Template = std::vector<Piece>;

// Appends literal text and references to a template.
class TemplateBuilder {
 public:
  TemplateBuilder& operator<<(std::string text) {
    if (text.empty()) return *this;  // no empty pieces: each expanded piece adds a character
    if (!pieces_.empty() && pieces_.back().ref == nullptr) {
      pieces_.back().text += text;
    } else {
      pieces_.push_back({std::move(text)});
    }
    return *this;
  }
  TemplateBuilder& operator<<(const VariablePtr& v) {
    pieces_.push_back({"", v.get()});
    return *this;
  }
  Template Take() { return std::move(pieces_); }

 private:
  Template pieces_;
};

// One pp run: a template for every variable, built bottom-up, then the root's expanded.
class PrettyPrinter {
 public:
  explicit PrettyPrinter(const PpOptions& options) : options_(options) {}

  absl::StatusOr<std::string> Print(const Variable* root) {
    // Post-order without recursion: a node's inputs get their templates before the node.
    std::vector<std::pair<const Variable*, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [v, inputs_done] = stack.back();
      stack.pop_back();
      if (templates_.contains(v) || alias_.contains(v)) continue;
      const Apply* node = v->owner();
      if (node == nullptr) {
        // Every leaf appears in the text (a constant as large as its value), so their texts
        // together may not pass max_chars either; a constant too large is not even formatted.
        const bool huge = v->is_constant() &&
                          static_cast<size_t>(static_cast<const Constant&>(*v).data().size()) >
                              options_.max_chars;
        std::string leaf = huge ? "" : LeafText(*v);
        leaf_chars_ += leaf.size();
        if (huge || leaf_chars_ > options_.max_chars) return TooLong();
        templates_.emplace(v, Template{{std::move(leaf)}});
      } else if (!inputs_done) {
        stack.push_back({v, true});
        for (const VariablePtr& in : node->inputs()) stack.push_back({in.get(), false});
      } else {
        Store(v, NodeTemplate(*node));
      }
    }
    return Expand(Resolve(root));
  }

 private:
  absl::Status TooLong() const {
    return absl::ResourceExhaustedError(
        absl::StrCat("pp: the expression's text exceeds ", options_.max_chars,
                     " characters (a shared subexpression is written out at each of its uses)"));
  }

  // A template that is just another variable's text is recorded as an alias of it, so that long
  // chains of such ops (identity, a DimShuffle that only adds dims) cost nothing to expand.
  void Store(const Variable* v, Template t) {
    if (t.size() == 1 && t[0].ref != nullptr) {
      alias_.emplace(v, Resolve(t[0].ref));
    } else {
      templates_.emplace(v, std::move(t));
    }
  }

  const Variable* Resolve(const Variable* v) const {
    auto it = alias_.find(v);
    return it == alias_.end() ? v : it->second;
  }

  // The root's text: every reference replaced by its text, each visit adding at least one
  // character, so the work is linear in the text, which may not pass max_chars.
  absl::StatusOr<std::string> Expand(const Variable* root) const {
    std::string out;
    std::vector<std::pair<const Template*, size_t>> stack = {{&templates_.at(root), 0}};
    while (!stack.empty()) {
      auto& [t, next] = stack.back();
      if (next == t->size()) {
        stack.pop_back();
        continue;
      }
      const Piece& piece = (*t)[next++];
      if (piece.ref != nullptr) {
        stack.push_back({&templates_.at(Resolve(piece.ref)), 0});
        continue;
      }
      out += piece.text;
      if (out.size() > options_.max_chars) return TooLong();
    }
    return out;
  }

  // open, the variables with `separator` between them, close: "[a, b]", "(a \dot b)".
  static Template Joined(const std::string& open, std::span<const VariablePtr> vars,
                         const std::string& separator, const std::string& close) {
    TemplateBuilder b;
    b << open;
    for (size_t i = 0; i < vars.size(); ++i) {
      if (i > 0) b << separator;
      b << vars[i];
    }
    b << close;
    return b.Take();
  }

  // "name(a, b)": Aesara's FunctionPrinter and DefaultPrinter.
  static Template Call(const std::string& name, const Apply& node) {
    return Joined(name + "(", node.inputs(), ", ", ")");
  }

  Template NodeTemplate(const Apply& node) const {
    const Op& op = node.op();
    const auto& in = node.inputs();
    if (const auto* ew = op.As<Elemwise>()) return ElemwiseTemplate(*ew, node);
    if (const auto* ds = op.As<DimShuffle>()) return DimShuffleTemplate(*ds, node);
    if (const auto* sub = op.As<Subtensor>()) {
      TemplateBuilder b;
      Index(b, sub->idx(), node, 1);
      return b.Take();
    }
    if (const auto* inc = op.As<IncSubtensor>()) {
      TemplateBuilder b;
      b << (inc->attrs().set ? "set_subtensor(" : "inc_subtensor(");
      Index(b, inc->idx(), node, 2);
      b << ", " << in[1] << ")";
      return b.Take();
    }
    if (op.Is<MakeVector>()) return Joined("[", in, ", ", "]");
    if (const auto* reduce = op.As<CAReduce>(); reduce && reduce->reduce() == ReduceKind::kSum) {
      TemplateBuilder b;
      b << "sum(" << in[0]
        << ", axis=" + op_decl::Codec<std::optional<std::vector<int>>>::Repr(reduce->axis()) + ")";
      return b.Take();
    }
    if (op.Is<Dot>()) return Joined("(", in, " \\dot ", ")");
    if (op.Is<Alloc>()) return Call("alloc", node);
    if (op.Is<Join>()) return Call("join", node);
    return Call(op.Name(), node);
  }

  // Operators in full parentheses, abs between bars, identity as its input, the rest by their
  // tensor function; an inplace op on its first input adds "=" ("+=", "exp=").
  static Template ElemwiseTemplate(const Elemwise& op, const Apply& node) {
    const ScalarOp& s = op.scalar_op();
    const bool inplace = op.inplace_pattern() == Elemwise::InplacePattern{{0, 0}};
    if (s.kind == ScalarOpKind::kComposite || (!op.inplace_pattern().empty() && !inplace)) {
      return Call(op.Name(), node);
    }
    const std::string eq = inplace ? "=" : "";
    if (PpPrintsSymbol(s.kind)) {
      const char* symbol = ScalarOpSymbol(s.kind);
      return node.inputs().size() == 1
                 ? Joined(absl::StrCat("(", symbol, eq), node.inputs(), "", ")")
                 : Joined("(", node.inputs(), absl::StrCat(" ", symbol, eq, " "), ")");
    }
    if (s.kind == ScalarOpKind::kIdentity && !inplace) return Joined("", node.inputs(), "", "");
    if (s.kind == ScalarOpKind::kAbs && !inplace) return Joined("|", node.inputs(), "", "|");
    return Call(FunctionName(s) + eq, node);
  }

  // New broadcastable dims in front are not shown; the identity order prints the input, the
  // reversed order "x.T", any other "DimShuffle{1, x, 0}(x)".
  static Template DimShuffleTemplate(const DimShuffle& op, const Apply& node) {
    std::vector<int> order = op.new_order();
    size_t lead = 0;
    while (lead < order.size() && order[lead] == kX) ++lead;
    order.erase(order.begin(), order.begin() + lead);
    const int ndim = static_cast<int>(op.input_broadcastable().size());
    bool same = static_cast<int>(order.size()) == ndim, reversed = same;
    for (int i = 0; same && i < ndim; ++i) same = order[i] == i;
    for (int i = 0; reversed && i < ndim; ++i) reversed = order[i] == ndim - 1 - i;
    TemplateBuilder b;
    if (same) {
      b << node.inputs()[0];
    } else if (reversed) {
      b << node.inputs()[0] << ".T";
    } else {
      std::vector<std::string> entries;
      for (int d : order) entries.push_back(d == kX ? "x" : absl::StrCat(d));
      b << absl::StrCat("DimShuffle{", absl::StrJoin(entries, ", "), "}(") << node.inputs()[0]
        << ")";
    }
    return b.Take();
  }

  // "x[0, 1:3, ::2]": the index list with its integers and bounds, which are node.inputs() from
  // `first` on. Where the step is absent or a positive constant, a constant start of 0 and a
  // constant stop of the largest int64 are left out (x[0:] prints x[:]; x[0::-1] stays).
  static void Index(TemplateBuilder& b, const std::vector<IndexEntry>& idx, const Apply& node,
                    size_t first) {
    size_t next = first;
    auto bound = [&](bool present, std::optional<int64_t> omit) {
      if (!present) return;
      const VariablePtr& v = node.inputs()[next++];
      if (!omit || ConstantInt(v) != omit) b << v;
    };
    b << node.inputs()[0] << "[";
    for (size_t k = 0; k < idx.size(); ++k) {
      const IndexEntry& e = idx[k];
      if (k > 0) b << ", ";
      if (!e.is_slice) {
        b << node.inputs()[next++];
        continue;
      }
      // The step is the last of this slice's inputs.
      const size_t step_at = next + e.has_start + e.has_stop;
      const std::optional<int64_t> step =
          e.has_step ? ConstantInt(node.inputs()[step_at]) : std::optional<int64_t>(1);
      const bool forward = step && *step > 0;
      bound(e.has_start, forward ? std::optional<int64_t>(0) : std::nullopt);
      b << ":";
      bound(e.has_stop,
            forward ? std::optional<int64_t>(std::numeric_limits<int64_t>::max()) : std::nullopt);
      if (e.has_step) {
        b << ":";
        bound(true, std::nullopt);
      }
    }
    b << "]";
  }

  const PpOptions& options_;
  std::unordered_map<const Variable*, Template> templates_;
  std::unordered_map<const Variable*, const Variable*> alias_;
  size_t leaf_chars_ = 0;
};

}  // namespace

absl::StatusOr<std::string> PrettyPrint(const Var& output, const PpOptions& options) {
  ASSIGN_OR_RETURN(VariablePtr v, Unwrap(output));
  return PrettyPrinter(options).Print(v.get());
}

}  // namespace kiln
