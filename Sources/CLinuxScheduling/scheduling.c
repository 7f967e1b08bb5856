#include "CLinuxScheduling.h"

#ifdef __linux__
#include <errno.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <sys/syscall.h>
#include <unistd.h>

int c_linux_schedule_fair(int32_t nice, uint64_t slice_nanoseconds) {
    struct sched_attr attributes = {
        .size = sizeof(attributes),
        .sched_policy = SCHED_NORMAL,
        .sched_nice = nice,
        .sched_runtime = slice_nanoseconds,
    };
    // pid 0: the calling thread (Linux schedules threads, not processes).
    return syscall(SYS_sched_setattr, 0, &attributes, 0) == 0 ? 0 : errno;
}
#else
int c_linux_schedule_fair(int32_t nice, uint64_t slice_nanoseconds) {
    (void)nice;
    (void)slice_nanoseconds;
    return 0;
}
#endif
