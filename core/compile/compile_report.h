// What Function::Make did to a graph, for a caller that asks (the server's console): its nodes
// before and after optimizing and how often each rewrite rule fired. Captured on the calling
// thread, so Function's interface stays as it is.
#ifndef KILN_CORE_COMPILE_COMPILE_REPORT_H_
#define KILN_CORE_COMPILE_COMPILE_REPORT_H_

#include <map>
#include <string>

namespace kiln {

struct CompileReport {
  int nodes_before = 0, nodes_after = 0;
  std::map<std::string, int> rule_counts;  // rules that fired, by name
};

// Collects the report of the outermost Function::Make this thread runs while it lives.
class CompileReportCapture {
 public:
  CompileReportCapture();
  ~CompileReportCapture();
  CompileReportCapture(const CompileReportCapture&) = delete;
  CompileReportCapture& operator=(const CompileReportCapture&) = delete;
  const CompileReport& report() const { return report_; }

  // The report a capture on this thread waits for, taken once (null when none): Function::Make
  // takes it, so that a Make nested in it (DebugMode's reference) reports nothing.
  static CompileReport* Take();

 private:
  CompileReport report_;
  CompileReport* previous_;
};

}  // namespace kiln

#endif  // KILN_CORE_COMPILE_COMPILE_REPORT_H_
