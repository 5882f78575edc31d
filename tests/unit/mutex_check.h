#ifndef TEST_MUTEX_CHECK_H
#define TEST_MUTEX_CHECK_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

/* The lock discipline of the xz decoder's unit tests (test_xzmt.c,
 * test_xzsink.c), checked as they run: every mutex made without attributes
 * (ce_xzmt's, liblzma's) is an error-checking one, and an unlock by a thread
 * that does not hold the mutex is counted (bad_unlocks).  ce_xzmt_free must
 * set the stop flag and broadcast under the lock: without it the decoding
 * thread can see no stop, miss the broadcast and wait forever (free never
 * returns), a race too narrow to lose on purpose; ce_xzmt_sink must publish
 * the sink under it. */
static int bad_unlocks;   /* read it with __atomic_load_n */

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
    int (*real)(pthread_mutex_t *, const pthread_mutexattr_t *) =
        (int (*)(pthread_mutex_t *, const pthread_mutexattr_t *))dlsym(RTLD_NEXT, "pthread_mutex_init");
    if (a) return real(m, a);
    pthread_mutexattr_t ec;
    pthread_mutexattr_init(&ec);
    pthread_mutexattr_settype(&ec, PTHREAD_MUTEX_ERRORCHECK);
    int r = real(m, &ec);
    pthread_mutexattr_destroy(&ec);
    return r;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    static int (*real)(pthread_mutex_t *);
    if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE))
        __atomic_store_n(&real, (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock"),
                         __ATOMIC_RELEASE);
    int r = real(m);
    if (r == EPERM) __atomic_add_fetch(&bad_unlocks, 1, __ATOMIC_RELAXED);
    return r;
}

#endif
