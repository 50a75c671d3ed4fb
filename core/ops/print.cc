#include "core/ops/print.h"

#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/graph/op_registry.h"
#include "core/tensor/status_macros.h"
#include "core/ops/op_util.h"

namespace kiln {

KILN_REGISTER_OP(Print);

namespace {

thread_local PrintCapture* current_capture = nullptr;

bool IsPythonName(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// Python's repr of a str, as Aesara prints the message: 'hello world'.
std::string PythonRepr(absl::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

// One attribute of a value as Python would show it, for the attributes C++ knows.
std::string AttrText(const Tensor& t, const std::string& attr) {
  if (attr == "__str__") return t.ToString();
  if (attr == "dtype") return std::string(DTypeName(t.dtype()));
  if (attr == "ndim") return absl::StrCat(t.ndim());
  if (attr == "size") return absl::StrCat(t.size());
  if (attr == "shape") return ShapeToString(t.shape());
  return "(shown by the Python client only)";
}

}  // namespace

absl::Status PrintAttrs::Check() const {
  if (message.size() > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("attribute 'message' has ", message.size(), " bytes, more than 4096"));
  }
  for (absl::string_view a : absl::StrSplit(attrs, ',')) {
    if (!IsPythonName(a)) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute 'attrs' holds '", a, "', which is not a Python name"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> Print::attr_list() const { return absl::StrSplit(attrs().attrs, ','); }

std::string Print::Name() const {
  std::vector<std::string> quoted;
  for (const std::string& a : attr_list()) quoted.push_back(PythonRepr(a));
  return absl::StrCat("Print{message=", PythonRepr(attrs().message), ", attrs=(",
                      absl::StrJoin(quoted, ", "), quoted.size() == 1 ? ",)}" : ")}");
}

absl::StatusOr<ApplyPtr> Print::MakeNode(std::vector<VariablePtr> inputs) const {
  if (inputs.size() != 1) return Invalid(*this, "expects 1 input (x)");
  RETURN_IF_ERROR(attrs().Check());
  TypePtr type = inputs[0]->type();
  return Apply::Make(self(), std::move(inputs), {std::move(type)});
}

absl::StatusOr<std::vector<std::vector<VariablePtr>>> Print::InferShape(
    const Apply&, const std::vector<std::vector<VariablePtr>>& in) const {
  return std::vector<std::vector<VariablePtr>>{in[0]};
}

absl::Status Print::Perform(const Apply&, std::span<const Tensor> inputs,
                            std::vector<Tensor>& outputs) const {
  if (PrintCapture* capture = PrintCapture::Current()) {
    capture->Add(*this, inputs[0]);
  } else {
    std::cout << PrintedText({attrs().message, attr_list(), inputs[0]}) << std::flush;
  }
  outputs[0] = inputs[0];
  return absl::OkStatus();
}

std::vector<Var> Print::LOp(const Apply&, const std::vector<Var>& output_grads) const {
  return {output_grads[0]};
}

std::string PrintedText(const PrintedValue& printed) {
  std::string text;
  for (const std::string& a : printed.attrs) {
    absl::StrAppend(&text, printed.message, " ", a, " = ", AttrText(printed.value, a), "\n");
  }
  return text;
}

Var print(const Var& x, const std::string& message, const std::vector<std::string>& attrs) {
  return ApplyOp(OpPtr(std::make_shared<Print>(PrintAttrs{message, absl::StrJoin(attrs, ",")})),
                 {x});
}

PrintCapture::PrintCapture(int64_t max_bytes) : max_bytes_(max_bytes), outer_(current_capture) {
  current_capture = this;
}

PrintCapture::~PrintCapture() { current_capture = outer_; }

PrintCapture* PrintCapture::Current() { return current_capture; }

void PrintCapture::Add(const Print& op, const Tensor& value) {
  // What a printed value really costs: its copy here and again in the answer, with the message
  // and attributes, and about half a KiB of bookkeeping (the record, the tensor's buffer, shape
  // and control block, the answer's message), so that a flood of small values is charged for
  // what it takes.
  constexpr int64_t kPerValue = 512;
  const int64_t bytes =
      kPerValue + 2 * (value.nbytes() +
                       static_cast<int64_t>(op.attrs().message.size() + op.attrs().attrs.size()));
  if (bytes_ + bytes > max_bytes_) {
    ++dropped_;
    return;
  }
  bytes_ += bytes;
  values_.push_back({op.attrs().message, op.attr_list(), value.AsType(value.dtype())});
}

void PrintCapture::Clear() {
  values_.clear();
  bytes_ = dropped_ = 0;
}

}  // namespace kiln
