#include "core/graph/inner_graph.h"

#include <cstring>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/attr_text.h"
#include "core/graph/op.h"
#include "core/graph/op_registry.h"
#include "core/graph/structural_names.h"
#include "core/tensor/status_macros.h"

// The text, one record a line, fields separated by one space:
//   kiln-graph 1
//   i <dtype> <dims>                          an input: "float64 ?,3" ("-" for no dims)
//   c <dtype> <dims> <data shape> <hex>       a constant: its type, its value's shape and bytes
//   n <class> <n> <ref>... <length>:<attribute text>   a node: its op's class, its n inputs and
//                                             its op's attributes (OpAttrs::Text)
//   o <ref>...                                the outputs
// where a ref is i<k>, c<k> or n<k>.<output>, always to an earlier record.
namespace kiln {
namespace {

constexpr absl::string_view kMagic = "kiln-graph 1\n";

std::string DimsText(const StaticShape& dims) {
  if (dims.empty()) return "-";
  std::vector<std::string> parts;
  for (const StaticDim& d : dims) parts.push_back(d ? absl::StrCat(*d) : "?");
  return absl::StrJoin(parts, ",");
}

// The text of a constant's record: its type, its shape and its bytes.
absl::StatusOr<std::string> ConstantRecord(const Variable& v) {
  const TensorType* t = v.tensor_type();
  if (!v.is_constant()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inner graph: ", v.ToString(), " is used but is neither an input nor a constant"));
  }
  if (t == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("inner graph: constant ", v.ToString(), " is not a tensor"));
  }
  const Tensor data = static_cast<const Constant&>(v).data().Contiguous();
  std::vector<std::string> shape;
  for (int64_t d : data.shape()) shape.push_back(absl::StrCat(d));
  return absl::StrCat(
      DTypeName(t->dtype()), " ", DimsText(t->shape()), " ",
      shape.empty() ? "-" : absl::StrJoin(shape, ","), " ",
      absl::BytesToHexString(
          absl::string_view(static_cast<const char*>(data.raw_data()), data.nbytes())));
}

// A cursor over the text; every read checks bounds.
class Reader {
 public:
  explicit Reader(absl::string_view text) : rest_(text) {}
  bool done() const { return rest_.empty(); }
  // The next field, up to a space or the end of the line (which is not consumed).
  absl::string_view Field() {
    size_t n = 0;
    while (n < rest_.size() && rest_[n] != ' ' && rest_[n] != '\n') ++n;
    absl::string_view f = rest_.substr(0, n);
    rest_.remove_prefix(n);
    if (!rest_.empty() && rest_[0] == ' ') rest_.remove_prefix(1);
    return f;
  }
  // `n` bytes exactly, or nullopt past the end.
  std::optional<absl::string_view> Bytes(size_t n) {
    if (n > rest_.size()) return std::nullopt;
    absl::string_view b = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return b;
  }
  // The text up to `c`, which is consumed; all the rest when there is none.
  absl::string_view UpTo(char c) {
    const size_t n = std::min(rest_.find(c), rest_.size());
    absl::string_view f = rest_.substr(0, n);
    rest_.remove_prefix(std::min(n + 1, rest_.size()));
    return f;
  }
  bool AtLineEnd() const { return !rest_.empty() && rest_[0] == '\n'; }
  bool EndLine() {
    if (!AtLineEnd()) return false;
    rest_.remove_prefix(1);
    return true;
  }

 private:
  absl::string_view rest_;
};

absl::Status Malformed(int line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("inner graph, record ", line, ": ", what));
}

std::optional<std::vector<int64_t>> ParseInts(absl::string_view text, bool allow_unknown,
                                              StaticShape* dims) {
  std::vector<int64_t> out;
  if (text == "-") return out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = -1;
    if (allow_unknown && part == "?") {
      dims->push_back(std::nullopt);
      continue;
    }
    if (!absl::SimpleAtoi(part, &v) || v < 0) return std::nullopt;
    if (dims != nullptr) dims->push_back(v);
    out.push_back(v);
  }
  return out;
}

thread_local int decode_depth = 0;

}  // namespace

absl::StatusOr<std::string> EncodeInnerGraph(const std::vector<VariablePtr>& inputs,
                                             const std::vector<VariablePtr>& outputs) {
  std::string text(kMagic);
  // Constants are records c<k> (equal ones once); a node is "n <op> <count> <refs> <attrs>".
  absl::flat_hash_map<std::string, int> constants;
  StructuralNames names(
      [&](const Variable& v) -> absl::StatusOr<std::string> {
        ASSIGN_OR_RETURN(std::string record, ConstantRecord(v));
        const auto [it, added] = constants.emplace(record, static_cast<int>(constants.size()));
        if (added) absl::StrAppend(&text, "c ", record, "\n");
        return absl::StrCat("c", it->second);
      },
      [](const Apply& node, std::span<const std::string* const> inputs) {
        const std::string attrs = node.op().Attrs().Text();
        std::string def = absl::StrCat(node.op().type_name(), " ", node.num_inputs());
        for (const std::string* in : inputs) absl::StrAppend(&def, " ", *in);
        absl::StrAppend(&def, " ", attrs.size(), ":", attrs);
        return def;
      },
      [&](int, const std::string& def) { absl::StrAppend(&text, "n ", def, "\n"); });
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.Preset(inputs[i].get(), absl::StrCat("i", i));
    const TensorType* t = inputs[i]->tensor_type();
    absl::StrAppend(&text, "i ", t ? DTypeName(t->dtype()) : "?", " ",
                    t ? DimsText(t->shape()) : "-", "\n");
  }
  std::vector<std::string> outs;
  for (const VariablePtr& v : outputs) {
    ASSIGN_OR_RETURN(std::string ref, names.NameOf(v.get()));
    outs.push_back(std::move(ref));
  }
  absl::StrAppend(&text, "o", outs.empty() ? "" : " ", absl::StrJoin(outs, " "), "\n");
  return text;
}

absl::StatusOr<InnerGraph> DecodeInnerGraph(absl::string_view text) {
  if (decode_depth >= kMaxInnerGraphDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("inner graphs nest more than ", kMaxInnerGraphDepth, " deep"));
  }
  struct DepthGuard {
    DepthGuard() { ++decode_depth; }
    ~DepthGuard() { --decode_depth; }
  } depth;
  if (text.substr(0, kMagic.size()) != kMagic) {
    return absl::InvalidArgumentError("inner graph: the text does not start with 'kiln-graph 1'");
  }
  Reader r(text.substr(kMagic.size()));
  InnerGraph g;
  std::vector<VariablePtr> constants;
  std::vector<ApplyPtr> nodes;
  auto ref = [&](absl::string_view f, int line) -> absl::StatusOr<VariablePtr> {
    size_t k = 0, o = 0;
    if (f.size() >= 2 && f[0] == 'i' && absl::SimpleAtoi(f.substr(1), &k) && k < g.inputs.size())
      return g.inputs[k];
    if (f.size() >= 2 && f[0] == 'c' && absl::SimpleAtoi(f.substr(1), &k) && k < constants.size())
      return constants[k];
    const size_t dot = f.find('.');
    if (f.size() >= 4 && f[0] == 'n' && dot != absl::string_view::npos &&
        absl::SimpleAtoi(f.substr(1, dot - 1), &k) && absl::SimpleAtoi(f.substr(dot + 1), &o) &&
        k < nodes.size() && o < static_cast<size_t>(nodes[k]->num_outputs())) {
      return nodes[k]->output(static_cast<int>(o));
    }
    return Malformed(line, absl::StrCat("'", f, "' names no earlier value"));
  };
  for (int line = 1;; ++line) {
    if (r.done()) return Malformed(line, "the text ends before its outputs");
    const absl::string_view kind = r.Field();
    if (kind == "i" || kind == "c") {
      const std::optional<DType> dtype = ParseDType(std::string(r.Field()));
      StaticShape dims;
      if (!dtype || !ParseInts(r.Field(), true, &dims)) return Malformed(line, "a bad type");
      TypePtr type = TensorType::Make(*dtype, dims);
      if (kind == "i") {
        if (!constants.empty() || !nodes.empty()) {
          return Malformed(line, "an input after constants or nodes");
        }
        g.inputs.push_back(Variable::Make(std::move(type)));
      } else {
        const std::optional<std::vector<int64_t>> shape = ParseInts(r.Field(), false, nullptr);
        if (!shape) return Malformed(line, "a bad constant shape");
        const std::string bytes = absl::HexStringToBytes(r.Field());
        ASSIGN_OR_RETURN(Tensor data, Tensor::FromBytes(*dtype, *shape, bytes, "inner constant"));
        ASSIGN_OR_RETURN(auto c, Constant::MakeChecked(std::move(type), std::move(data)));
        constants.push_back(std::move(c));
      }
    } else if (kind == "n") {
      const std::string type_name(r.Field());
      size_t num_inputs = 0, length = 0;
      if (!absl::SimpleAtoi(r.Field(), &num_inputs)) return Malformed(line, "a bad input count");
      std::vector<VariablePtr> inputs;
      for (size_t k = 0; k < num_inputs; ++k) {
        ASSIGN_OR_RETURN(VariablePtr in, ref(r.Field(), line));
        inputs.push_back(std::move(in));
      }
      std::optional<absl::string_view> attr_text;
      if (!absl::SimpleAtoi(r.UpTo(':'), &length) || !(attr_text = r.Bytes(length))) {
        return Malformed(line, "a bad attribute text");
      }
      absl::StatusOr<OpAttrs> attrs = ParseAttrText(*attr_text);
      if (!attrs.ok()) return Malformed(line, attrs.status().message());
      absl::StatusOr<OpPtr> op = MakeOp(type_name, *attrs);
      if (!op.ok()) return Malformed(line, op.status().message());
      absl::StatusOr<ApplyPtr> node = (*op)->MakeNode(std::move(inputs));
      if (!node.ok()) return Malformed(line, node.status().message());
      nodes.push_back(*std::move(node));
    } else if (kind == "o") {
      while (!r.AtLineEnd() && !r.done()) {
        ASSIGN_OR_RETURN(VariablePtr out, ref(r.Field(), line));
        g.outputs.push_back(std::move(out));
      }
      if (!r.EndLine() || !r.done()) return Malformed(line, "text after the outputs");
      return g;
    } else {
      return Malformed(line, absl::StrCat("unknown record '", kind, "'"));
    }
    if (!r.EndLine()) return Malformed(line, "the record does not end where expected");
  }
}

}  // namespace kiln
