#ifndef C_LINUX_SCHEDULING_H
#define C_LINUX_SCHEDULING_H

#include <stdint.h>

/// Puts the calling thread under Linux's fair scheduler (`SCHED_OTHER`) at `nice`, with a
/// slice of `slice_nanoseconds` (`sched_setattr(2)`'s `sched_runtime`; the kernel honours it
/// from Linux 6.12 and clamps it to 0.1–100 ms; 0 asks for the default). Swift cannot call
/// the variadic `syscall(2)`, and glibc before 2.41 has no `sched_setattr` wrapper.
///
/// Returns 0, or the `errno` of the refusal. Elsewhere than Linux it does nothing and returns 0.
int c_linux_schedule_fair(int32_t nice, uint64_t slice_nanoseconds);

#endif
