// OpenBLAS's idle workers spin for 2^28 cycles (about 0.1 s) after each call before they sleep.
// On a machine with few cores they take a core from the elementwise kernels that follow a matrix
// product (G4's tanh ran at half speed). Unless OPENBLAS_THREAD_TIMEOUT is set, Kiln sets it to
// 2^18 cycles (about 0.1 ms) when it loads and restarts the workers so that they read it; with a
// BLAS other than OpenBLAS this does nothing.
#include <dlfcn.h>

#include <cstdlib>

namespace kiln {
namespace {

bool ShortenBlasSpin() {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") != nullptr) return false;
  using Fn = void (*)();
  auto read_env = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "openblas_read_env"));
  auto shutdown = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  if (read_env == nullptr || shutdown == nullptr) return false;
  setenv("OPENBLAS_THREAD_TIMEOUT", "18", 0);
  read_env();
  shutdown();  // the next threaded call starts the workers again, with the new timeout
  return true;
}

// Runs while the library loads, before any thread of Kiln's exists (the ops' library is linked
// whole, so this file always is).
[[maybe_unused]] const bool kShortened = ShortenBlasSpin();

}  // namespace
}  // namespace kiln
