// Aesara's printing.Print: an identity op that shows its input's value each time it runs.
#ifndef KILN_CORE_OPS_PRINT_H_
#define KILN_CORE_OPS_PRINT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/op_decl.h"
#include "core/graph/var.h"
#include "core/tensor/tensor.h"

namespace kiln {

// The props of Print: the message and the attributes of the value to show, comma-separated
// Python names ("__str__", "shape", "__str__,dtype").
struct PrintAttrs {
  std::string message;
  std::string attrs = "__str__";
  static constexpr auto Fields() {
    return std::tuple{AttrField{"message", &PrintAttrs::message},
                      AttrField{"attrs", &PrintAttrs::attrs}};
  }
  // Every attribute is a Python identifier, and the message is at most 4096 bytes.
  absl::Status Check() const;
};

// Print{message, attrs}(x): x itself (a view), and, each time it runs, the message, attrs and a
// copy of x given to the PrintCapture of the running thread, or else written to standard output
// ("hello world __str__ = [1. 2. 3.]"). Not constant-folded; its gradient is the output's.
class Print final : public DeclaredOp<Print, PrintAttrs> {
 public:
  KILN_DECLARED_OP("Print")
  // The attributes as a list.
  std::vector<std::string> attr_list() const;
  // Aesara's "Print{message='hello world', attrs=('__str__',)}".
  std::string Name() const override;
  std::vector<std::pair<int, int>> view_map() const override { return {{0, 0}}; }
};

// Aesara's printing.Print(message, attrs)(x).
Var print(const Var& x, const std::string& message,
          const std::vector<std::string>& attrs = {"__str__"});

// What a Print showed during a call.
struct PrintedValue {
  std::string message;
  std::vector<std::string> attrs;
  Tensor value;  // a copy, taken when the Print ran
};

// What Print shows without a capture: "message attr = value" for each attribute, as Aesara's
// _print_fn writes it (the attributes C++ knows: __str__, shape, dtype, ndim, size).
std::string PrintedText(const PrintedValue& printed);

// Collects what Print ops run on this thread show, while it lives (the server sends them back
// with the call's results). Each value is charged what it really takes (its copy here and in the
// answer, its message and attributes, and 512 bytes of bookkeeping); values past `max_bytes` in
// all are dropped and counted.
class PrintCapture {
 public:
  explicit PrintCapture(int64_t max_bytes = int64_t{64} << 20);
  ~PrintCapture();
  PrintCapture(const PrintCapture&) = delete;
  PrintCapture& operator=(const PrintCapture&) = delete;

  // The capture of this thread, or nullptr.
  static PrintCapture* Current();
  // Records one value (or counts it as dropped).
  void Add(const Print& op, const Tensor& value);
  // Forgets what was recorded (a call that is run again).
  void Clear();
  const std::vector<PrintedValue>& values() const { return values_; }
  int64_t dropped() const { return dropped_; }

 private:
  int64_t max_bytes_, bytes_ = 0, dropped_ = 0;
  std::vector<PrintedValue> values_;
  PrintCapture* outer_;
};

}  // namespace kiln

#endif  // KILN_CORE_OPS_PRINT_H_
