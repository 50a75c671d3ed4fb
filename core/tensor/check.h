// KILN_CHECK: aborts with a message when an internal invariant fails. Only for bugs: user input
// gets an absl::Status. (Debian 12's Abseil predates absl/log.)
#ifndef KILN_CORE_TENSOR_CHECK_H_
#define KILN_CORE_TENSOR_CHECK_H_

#include <sstream>

namespace kiln::internal {

// Collects the message of a failed check and aborts when destroyed.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets the conditional operator in KILN_CHECK have void on both sides.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace kiln::internal

// KILN_CHECK(cond) << "more context";
#define KILN_CHECK(condition)                 \
  (condition) ? (void)0                       \
              : ::kiln::internal::Voidify() & \
                    ::kiln::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#endif  // KILN_CORE_TENSOR_CHECK_H_
