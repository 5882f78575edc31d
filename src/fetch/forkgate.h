/* fork() of the unpackers while the download thread runs (components.c).
 *
 * glibc's fork() takes its malloc locks before it copies the process, so a
 * child forked while another thread allocates finds a consistent heap.
 * AddressSanitizer's allocator (GCC 12's libasan) has no such handler: an
 * unpacker forked while the download thread held one of its locks hung at
 * its first allocation (make check-asan, hashonce.bats, about one run in
 * ten).  So under ASan the forking thread first waits until the download
 * thread stands where it allocates nothing: parked at the top of a transfer
 * round (ce_forkgate_point), or retired after its last one
 * (ce_forkgate_retire, where it waits for ce_forkgate_release before it
 * exits).  Built without ASan, every call here does nothing. */
#ifndef CE_FORKGATE_H
#define CE_FORKGATE_H

#include <sys/types.h>

/* Before the download thread is created: forks wait for it from now on. */
void ce_forkgate_enter(void);
/* The download thread, at the top of each transfer round. */
void ce_forkgate_point(void);
/* The download thread after its last round: blocks until released. */
void ce_forkgate_retire(void);
/* The creating thread, right before it joins the download thread. */
void ce_forkgate_release(void);
/* fork() with the download thread parked or retired (or none). */
pid_t ce_forkgate_fork(void);
/* Transfer threads fetch.c may run, of want: 1 under ASan (the gate parks
 * one download thread), else want. */
long ce_forkgate_threads(long want);

#endif
