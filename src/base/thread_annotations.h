// Shared state visible in the types: a member read and written only with a mutex held says
// which. Clang's -Wthread-safety can check these where the mutex type is annotated; with
// GCC they document, and ThreadSanitizer (DYNACOMM_TSAN, ctest -L threads) checks the
// running code.
//
//   std::mutex mu_;
//   int count_ DYNACOMM_GUARDED_BY(mu_) = 0;
#pragma once

#if defined(__clang__)
#define DYNACOMM_GUARDED_BY(x) __attribute__((guarded_by(x)))
#else
#define DYNACOMM_GUARDED_BY(x)
#endif
