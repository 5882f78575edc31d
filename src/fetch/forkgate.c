/* forkgate.h: a fork the download thread cannot be allocating during. */
#include "forkgate.h"

#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <pthread.h>
#include <stdbool.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool active, want, parked, retired, released;

void ce_forkgate_enter(void)
{
    pthread_mutex_lock(&mu);
    active = true;
    want = parked = retired = released = false;
    pthread_mutex_unlock(&mu);
}

void ce_forkgate_point(void)
{
    pthread_mutex_lock(&mu);
    if (want) {
        parked = true;
        pthread_cond_broadcast(&cv);
        while (want) pthread_cond_wait(&cv, &mu);
        parked = false;
    }
    pthread_mutex_unlock(&mu);
}

void ce_forkgate_retire(void)
{
    pthread_mutex_lock(&mu);
    if (active) {
        retired = true;
        pthread_cond_broadcast(&cv);
        while (!released) pthread_cond_wait(&cv, &mu);
    }
    pthread_mutex_unlock(&mu);
}

void ce_forkgate_release(void)
{
    pthread_mutex_lock(&mu);
    released = true;
    active = false;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

pid_t ce_forkgate_fork(void)
{
    pthread_mutex_lock(&mu);
    want = true;
    while (active && !parked && !retired) pthread_cond_wait(&cv, &mu);
    pid_t pid = fork();
    if (pid == 0) {
        /* the child has no download thread; the gate is its copy */
        pthread_mutex_unlock(&mu);
        return 0;
    }
    want = false;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return pid;
}

long ce_forkgate_threads(long n)
{
    (void)n;
    return 1;
}

#else

void ce_forkgate_enter(void) {}
void ce_forkgate_point(void) {}
void ce_forkgate_retire(void) {}
void ce_forkgate_release(void) {}
pid_t ce_forkgate_fork(void) { return fork(); }
long ce_forkgate_threads(long want) { return want; }

#endif
