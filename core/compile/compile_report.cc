#include "core/compile/compile_report.h"

namespace kiln {
namespace {

thread_local CompileReport* waiting = nullptr;

}  // namespace

CompileReportCapture::CompileReportCapture() : previous_(waiting) { waiting = &report_; }

CompileReportCapture::~CompileReportCapture() { waiting = previous_; }

CompileReport* CompileReportCapture::Take() {
  CompileReport* report = waiting;
  waiting = nullptr;
  return report;
}

}  // namespace kiln
