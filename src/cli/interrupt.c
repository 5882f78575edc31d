/* Ctrl-C (SIGINT) or SIGTERM during an install: the downloads write what
 * they hold in memory, and the message says exactly what each .part keeps
 * and what the next run does with it, then cudaenv dies of the signal
 * (status 128+N).
 *
 * The signal handler only wakes a thread of this file (one byte down a
 * pipe): the download thread may be in the middle of a write, and what is
 * "kept" is known only once it stands still.  That thread stops it
 * (ce_fetch_stop_all: every buffer written, every lock kept), so the
 * number printed is each .part's size, which is where the next run resumes
 * ("Range: bytes=N-"); a .part with no byte starts over.  A second signal,
 * or no thread, ends the process at once with the plain message.  A forked
 * unpacker (it inherits the handler) dies of the signal without a word. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/bytes.h"
#include "fetch/fetch.h"

#define KEPT_MAX 256         /* more than an install downloads (MAX_PARTS) */
#define LISTED 3            /* names in the message; the rest are counted */

static char plain_msg[4400];
static char root_dir[4200];
static int wake[2] = { -1, -1 };
static pid_t owner;
static volatile sig_atomic_t hits;

static void die_of(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
}

static void on_interrupt(int sig)
{
    if (getpid() != owner)    /* an unpacker: the parent says what was kept */
        die_of(sig);
    if (hits++ == 0 && wake[1] >= 0) {
        unsigned char b = (unsigned char)sig;
        if (write(wake[1], &b, 1) == 1)
            return;
    }
    if (cli_render_bar_shown()) { ssize_t w = write(2, "\r\033[K", 4); (void)w; }
    ssize_t w = write(2, plain_msg, strlen(plain_msg));
    (void)w;
    die_of(sig);
}

/* The kept ones (bytes > 0: "N bytes (X MiB) of NAME") or the empty ones
 * ("NAME"), LISTED of them named: "A, B, C and 2 more". */
static void list(char *m, size_t cap, size_t *len, const ce_fetch_kept *k, size_t n, bool kept)
{
    size_t shown = 0, all = 0;
    for (size_t i = 0; i < n; i++) {
        if ((k[i].bytes > 0) != kept) continue;
        if (shown < LISTED && *len < cap) {
            const char *sep = shown ? ", " : "";
            char h[32];
            ce_bytes_text(h, sizeof h, (double)k[i].bytes);
            *len += kept ? (size_t)snprintf(m + *len, cap - *len, "%s%lld bytes (%s) of %s", sep, k[i].bytes, h, k[i].label)
                         : (size_t)snprintf(m + *len, cap - *len, "%s%s", sep, k[i].label);
        }
        shown += shown < LISTED;
        all++;
    }
    if (all > shown && *len < cap)
        *len += (size_t)snprintf(m + *len, cap - *len, " and %zu more", all - shown);
}

static void say_kept(void)
{
    static ce_fetch_kept k[KEPT_MAX];
    size_t n = ce_fetch_stop_all(k, KEPT_MAX);
    if (n > KEPT_MAX) n = KEPT_MAX;
    size_t nkept = 0;
    const ce_fetch_kept *one = NULL;
    for (size_t i = 0; i < n; i++)
        if (k[i].bytes > 0 && nkept++ == 0) one = &k[i];
    size_t nzero = n - nkept;
    char m[8192];
    size_t len = 0, cap = sizeof m;
    if (!n) {
        len = (size_t)snprintf(m, cap, "%s", plain_msg);
    } else {
        len = (size_t)snprintf(m, cap, "cudaenv: interrupted; ");
        if (nkept) {
            len += (size_t)snprintf(m + len, cap - len, "kept ");
            list(m, cap, &len, k, n, true);
            if (len < cap && nkept == 1)
                len += (size_t)snprintf(m + len, cap - len, " in %s/cache; run the same command again to resume it "
                                        "at byte %lld", root_dir, one->bytes);
            else if (len < cap)
                len += (size_t)snprintf(m + len, cap - len, " in %s/cache; run the same command again to resume each "
                                        "from there", root_dir);
        }
        if (nzero && len < cap) {
            if (nkept) len += (size_t)snprintf(m + len, cap - len, "; ");
            list(m, cap, &len, k, n, false);
            if (len < cap)
                len += (size_t)snprintf(m + len, cap - len, " kept no byte: %s over", nzero == 1 ? "it starts" : "they start");
            if (!nkept && len < cap)
                len += (size_t)snprintf(m + len, cap - len, " when the same command runs again (finished downloads "
                                        "are kept in %s/cache)", root_dir);
        }
        if (len < cap) len += (size_t)snprintf(m + len, cap - len, "\n");
    }
    if (len >= cap) { len = cap - 1; m[cap - 2] = '\n'; }
    if (cli_render_bar_shown()) { ssize_t w = write(2, "\r\033[K", 4); (void)w; }
    ssize_t w = write(2, m, len);
    (void)w;
}

static void *watch(void *arg)
{
    (void)arg;
    unsigned char sig;
    ssize_t r;
    while ((r = read(wake[0], &sig, 1)) < 0 && errno == EINTR) {}
    if (r != 1) return NULL;
    say_kept();
    die_of(sig);
    return NULL;
}

void cli_render_trap_interrupt(cli *c)
{
    snprintf(root_dir, sizeof root_dir, "%s", c->ctx.root);
    snprintf(plain_msg, sizeof plain_msg, "cudaenv: interrupted; finished downloads are kept in %s/cache; "
             "run the same command again to resume\n", c->ctx.root);
    owner = getpid();
    pthread_t t;
    if (pipe2(wake, O_CLOEXEC) == 0 && pthread_create(&t, NULL, watch, NULL) == 0) {
        pthread_detach(t);
    } else {
        if (wake[0] >= 0) { close(wake[0]); close(wake[1]); }
        wake[0] = wake[1] = -1;
    }
    /* a signal the parent ignores (a script's background job) stays ignored */
    static const int sigs[] = { SIGINT, SIGTERM };
    for (size_t i = 0; i < 2; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) signal(sigs[i], on_interrupt);
    }
}
