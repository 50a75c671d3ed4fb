#include "core/runtime/serialize.h"

#include <cstring>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "core/graph/op.h"
#include "core/graph/op_registry.h"
#include "core/graph/status_macros.h"
#include "core/runtime/shared.h"

namespace kiln {
namespace {

constexpr char kMagic[] = "KILNGRAPH";
// Bounds that keep a hostile file from asking for absurd allocations.
constexpr uint64_t kMaxCount = 1u << 24;

class Writer {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void F64(double v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s.data(), s.size());
  }
  void Type(const TensorType& t) {
    Str(DTypeName(t.dtype()));
    U64(t.ndim());
    for (const StaticDim& d : t.shape()) I64(d.value_or(-1));
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  absl::StatusOr<uint64_t> U64() {
    if (in_.size() - pos_ < 8) return Truncated();
    uint64_t v;
    std::memcpy(&v, in_.data() + pos_, 8);
    pos_ += 8;
    return v;
  }
  absl::StatusOr<uint64_t> Count() {
    absl::StatusOr<uint64_t> n = U64();
    if (n.ok() && *n > kMaxCount) return absl::InvalidArgumentError("graph bytes: count too large");
    return n;
  }
  absl::StatusOr<double> F64() {
    ASSIGN_OR_RETURN(uint64_t bits, U64());
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  absl::StatusOr<std::string> Str() {
    ASSIGN_OR_RETURN(uint64_t n, U64());
    if (n > in_.size() - pos_) return Truncated();
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  absl::StatusOr<TypePtr> Type() {
    ASSIGN_OR_RETURN(std::string name, Str());
    std::optional<DType> d = ParseDType(name);
    if (!d)
      return absl::InvalidArgumentError(absl::StrCat("graph bytes: unknown dtype '", name, "'"));
    absl::StatusOr<uint64_t> ndim = U64();
    if (!ndim.ok()) return ndim.status();
    if (*ndim > 64) return absl::InvalidArgumentError("graph bytes: too many dims");
    StaticShape shape;
    for (uint64_t i = 0; i < *ndim; ++i) {
      absl::StatusOr<uint64_t> dim = U64();
      if (!dim.ok()) return dim.status();
      const int64_t v = static_cast<int64_t>(*dim);
      if (v < -1) return absl::InvalidArgumentError("graph bytes: negative dim");
      shape.push_back(v < 0 ? std::nullopt : StaticDim(v));
    }
    Shape known;  // within a tensor's bounds, as proto/convert checks types from the wire
    for (const StaticDim& dim : shape) {
      if (dim) known.push_back(*dim);
    }
    RETURN_IF_ERROR(CheckStaticShape("graph bytes: type", known));
    return TypePtr(TensorType::Make(*d, shape));
  }
  bool AtEnd() const { return pos_ == in_.size(); }

 private:
  static absl::Status Truncated() { return absl::InvalidArgumentError("graph bytes: truncated"); }
  std::string_view in_;
  size_t pos_ = 0;
};

enum AttrTag : uint64_t { kInt = 0, kDouble = 1, kString = 2, kInts = 3 };

// A value used by a node or returned: (0, the id of an input or a node output) or (1, a
// constant's type, bytes and shape) written where it is used.
absl::Status WriteRef(Writer& w, const Variable& v,
                      const std::unordered_map<const Variable*, uint64_t>& id) {
  if (v.is_constant()) {
    const Tensor data = static_cast<const Constant&>(v).data().Contiguous();
    w.U64(1);
    w.Type(*v.tensor_type());
    w.Str(std::string_view(static_cast<const char*>(data.raw_data()), data.nbytes()));
    w.U64(data.ndim());
    for (int64_t d : data.shape()) w.I64(d);
    return absl::OkStatus();
  }
  auto it = id.find(&v);
  if (it == id.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot serialize: ", v.ToString(), " is not an input or an output"));
  }
  w.U64(0);
  w.U64(it->second);
  return absl::OkStatus();
}

// WriteRef's value back; `where` names it in errors.
absl::StatusOr<VariablePtr> ReadRef(Reader& r, const std::vector<VariablePtr>& vars,
                                    const std::string& where) {
  absl::StatusOr<uint64_t> tag = r.U64();
  if (!tag.ok()) return tag.status();
  if (*tag == 0) {
    ASSIGN_OR_RETURN(uint64_t ref, r.U64());
    if (ref >= vars.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " refers to ", ref, ", not an earlier variable"));
    }
    return vars[ref];
  }
  if (*tag != 1) return absl::InvalidArgumentError(absl::StrCat(where, ": bad reference tag"));
  absl::StatusOr<TypePtr> t = r.Type();
  absl::StatusOr<std::string> data = r.Str();
  absl::StatusOr<uint64_t> ndim = r.U64();
  if (!t.ok()) return t.status();
  if (!data.ok()) return data.status();
  if (!ndim.ok() || *ndim > 64) return absl::InvalidArgumentError(where + ": bad constant");
  Shape shape;
  for (uint64_t d = 0; d < *ndim; ++d) {
    ASSIGN_OR_RETURN(uint64_t dim, r.U64());
    shape.push_back(static_cast<int64_t>(dim));
  }
  const DType dtype = static_cast<const TensorType&>(**t).dtype();
  absl::StatusOr<Tensor> value = Tensor::FromBytes(dtype, std::move(shape), *data, "constant");
  if (!value.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", value.status().message()));
  }
  absl::StatusOr<std::shared_ptr<Constant>> c = Constant::MakeChecked(*t, *std::move(value));
  if (!c.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", c.status().message()));
  return VariablePtr(*std::move(c));
}

}  // namespace

absl::StatusOr<std::string> SerializeGraph(const FunctionGraph& fg) {
  Writer w;
  w.Str(kMagic);
  w.U64(kGraphFormatVersion);
  std::unordered_map<const Variable*, uint64_t> id;
  w.U64(fg.inputs().size());
  for (const VariablePtr& in : fg.inputs()) {
    if (AsShared(*in) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot serialize a graph with the shared variable ", in->ToString()));
    }
    if (in->tensor_type() == nullptr) return absl::InvalidArgumentError("a non-tensor input");
    w.Type(*in->tensor_type());
    id[in.get()] = id.size();
  }
  const std::vector<Apply*> order = fg.Toposort();
  w.U64(order.size());
  for (Apply* node : order) {
    // Constants are written where first used: (id = kConstant, type, bytes).
    w.Str(std::string(node->op().type_name()));
    const OpAttrs attrs = node->op().Attrs();
    w.U64(attrs.values().size());
    for (const auto& [key, value] : attrs.values()) {
      w.Str(key);
      w.U64(value.index());
      if (const auto* i = std::get_if<int64_t>(&value)) w.I64(*i);
      if (const auto* d = std::get_if<double>(&value)) w.F64(*d);
      if (const auto* s = std::get_if<std::string>(&value)) w.Str(*s);
      if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) {
        w.U64(v->size());
        for (int64_t e : *v) w.I64(e);
      }
    }
    w.U64(node->num_inputs());
    for (const VariablePtr& in : node->inputs()) {
      RETURN_IF_ERROR(WriteRef(w, *in, id));
    }
    w.U64(node->num_outputs());
    for (int o = 0; o < node->num_outputs(); ++o) {
      w.Type(*node->output_ptr(o)->tensor_type());
      id[node->output_ptr(o)] = id.size();
    }
  }
  w.U64(fg.outputs().size());
  for (const VariablePtr& out : fg.outputs()) {
    RETURN_IF_ERROR(WriteRef(w, *out, id));
  }
  return w.Take();
}

absl::StatusOr<LoadedGraph> DeserializeGraph(std::string_view bytes) {
  Reader r(bytes);
  absl::StatusOr<std::string> magic = r.Str();
  if (!magic.ok() || *magic != kMagic) return absl::InvalidArgumentError("not a Kiln graph");
  absl::StatusOr<uint64_t> version = r.U64();
  if (!version.ok()) return version.status();
  if (*version != kGraphFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph format version ", *version, ", expected ", kGraphFormatVersion));
  }
  LoadedGraph g;
  std::vector<VariablePtr> vars;
  ASSIGN_OR_RETURN(uint64_t n_inputs, r.Count());
  for (uint64_t i = 0; i < n_inputs; ++i) {
    absl::StatusOr<TypePtr> t = r.Type();
    if (!t.ok()) return t.status();
    g.inputs.push_back(Variable::Make(*t));
    vars.push_back(g.inputs.back());
  }
  absl::StatusOr<uint64_t> n_nodes = r.Count();
  if (!n_nodes.ok()) return n_nodes.status();
  for (uint64_t n = 0; n < *n_nodes; ++n) {
    absl::StatusOr<std::string> kind_name = r.Str();
    if (!kind_name.ok()) return kind_name.status();
    absl::StatusOr<uint64_t> n_attrs = r.Count();
    if (!n_attrs.ok()) return n_attrs.status();
    OpAttrs attrs;
    for (uint64_t a = 0; a < *n_attrs; ++a) {
      absl::StatusOr<std::string> key = r.Str();
      absl::StatusOr<uint64_t> tag = r.U64();
      if (!key.ok()) return key.status();
      if (!tag.ok()) return tag.status();
      if (*tag == kInt || *tag == kDouble) {
        absl::StatusOr<uint64_t> bits = r.U64();
        if (!bits.ok()) return bits.status();
        if (*tag == kInt) {
          attrs.Set(*key, static_cast<int64_t>(*bits));
        } else {
          double d;
          std::memcpy(&d, &*bits, 8);
          attrs.Set(*key, d);
        }
      } else if (*tag == kString) {
        absl::StatusOr<std::string> s = r.Str();
        if (!s.ok()) return s.status();
        attrs.Set(*key, *s);
      } else if (*tag == kInts) {
        absl::StatusOr<uint64_t> len = r.Count();
        if (!len.ok()) return len.status();
        std::vector<int64_t> v;
        for (uint64_t i = 0; i < *len; ++i) {
          absl::StatusOr<uint64_t> e = r.U64();
          if (!e.ok()) return e.status();
          v.push_back(static_cast<int64_t>(*e));
        }
        attrs.Set(*key, v);
      } else {
        return absl::InvalidArgumentError(absl::StrCat("node ", n, ": bad attribute tag"));
      }
    }
    absl::StatusOr<OpPtr> op = MakeOp(*kind_name, attrs);
    if (!op.ok())
      return absl::InvalidArgumentError(absl::StrCat("node ", n, ": ", op.status().message()));
    absl::StatusOr<uint64_t> n_in = r.Count();
    if (!n_in.ok()) return n_in.status();
    std::vector<VariablePtr> inputs;
    for (uint64_t i = 0; i < *n_in; ++i) {
      absl::StatusOr<VariablePtr> in = ReadRef(r, vars, absl::StrCat("node ", n, ": input ", i));
      if (!in.ok()) return in.status();
      inputs.push_back(*std::move(in));
    }
    absl::StatusOr<ApplyPtr> node = (*op)->MakeNode(inputs);
    if (!node.ok())
      return absl::InvalidArgumentError(absl::StrCat("node ", n, ": ", node.status().message()));
    absl::StatusOr<uint64_t> n_out = r.Count();
    if (!n_out.ok()) return n_out.status();
    if (*n_out != static_cast<uint64_t>((*node)->num_outputs())) {
      return absl::InvalidArgumentError(absl::StrCat("node ", n, ": output count"));
    }
    for (uint64_t o = 0; o < *n_out; ++o) {
      absl::StatusOr<TypePtr> t = r.Type();
      if (!t.ok()) return t.status();
      const TensorType* made = (*node)->output_ptr(o)->tensor_type();
      const auto& stored = static_cast<const TensorType&>(**t);
      if (made == nullptr || made->dtype() != stored.dtype() || made->ndim() != stored.ndim()) {
        return absl::InvalidArgumentError(absl::StrCat("node ", n, ": output ", o, " has type ",
                                                       made ? made->ToString() : "?",
                                                       " but the bytes say ", stored.ToString()));
      }
      vars.push_back((*node)->output(o));
    }
  }
  absl::StatusOr<uint64_t> n_outputs = r.Count();
  if (!n_outputs.ok()) return n_outputs.status();
  for (uint64_t o = 0; o < *n_outputs; ++o) {
    absl::StatusOr<VariablePtr> out = ReadRef(r, vars, absl::StrCat("output ", o));
    if (!out.ok()) return out.status();
    g.outputs.push_back(*std::move(out));
  }
  if (!r.AtEnd()) return absl::InvalidArgumentError("graph bytes: trailing data");
  return g;
}

}  // namespace kiln
