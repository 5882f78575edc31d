/* The one place that draws: messages on stderr, nothing on stdout.  On a
 * terminal, one progress line (downloads running in parallel share it) that
 * fits the width and names the active files; without one, a line per file
 * every 10 % or 15 s.  (What Ctrl-C says: interrupt.c.) */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/bytes.h"
#include "core/clock.h"
#include "core/trust.h"

#define MAX_ITEMS 16

/* One download (or step) being reported.  On a terminal all of them share one
 * line that fits its width and names the active ones; without a terminal
 * (CI logs) each gets a line every 10 % or 15 s. */
typedef struct bar_item {
    char name[96];
    long long done, total;
    double rate;
    bool finished;
    int next_pct;          /* pipe: next 10 % step to report */
    double last_line;      /* pipe: when its last line was printed */
    double last_change;    /* when done last moved: a stall shows */
} bar_item;
static bar_item items[MAX_ITEMS];
static size_t n_items;
static bool bar_drawn;
static double last_draw;
#define PIPE_INTERVAL_S 15.0
#define STALL_SHOW_S 5.0

/* The bar is on the line (interrupt.c clears it before its message). */
static volatile sig_atomic_t interrupt_tty_bar;

bool cli_render_bar_shown(void)
{
    return interrupt_tty_bar != 0;
}

static void clear_bar(void)
{
    if (bar_drawn) {
        fputs("\r\033[K", stderr);
        bar_drawn = false;
        interrupt_tty_bar = 0;
    }
}

void cli_size(char *out, size_t n, double bytes)
{
    ce_bytes_text(out, n, bytes);
}

static int term_width(void)
{
    struct winsize ws;
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    const char *c = getenv("COLUMNS");
    int w = c ? atoi(c) : 0;
    return w > 0 ? w : 80;
}

static void draw_bar(void)
{
    long long done = 0, total = 0;
    double rate = 0;
    bool unknown = false;
    char names[256] = "";
    size_t nl = 0;
    for (size_t i = 0; i < n_items; i++) {
        done += items[i].done;
        if (items[i].total < 0) unknown = true; else total += items[i].total;
        if (!items[i].finished) {
            rate += items[i].rate;
            double still = ce_mono_s() - items[i].last_change;
            if (nl < sizeof names && still >= STALL_SHOW_S)
                nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s (no data for %.0fs)", nl ? ", " : "",
                                       items[i].name, still);
            else if (nl < sizeof names)
                nl += (size_t)snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "", items[i].name);
        }
    }
    /* the units every other line uses ("338.2 MiB/845.4 MiB"); a narrow
     * terminal loses the end of the line (the names) first */
    char d[32], t[32], r[32], eta[64] = " ETA --:--";
    cli_size(d, sizeof d, (double)done);
    cli_size(t, sizeof t, (double)total);
    cli_size(r, sizeof r, rate);
    if (!unknown && rate > 0 && total > done) {
        long sec = (long)((double)(total - done) / rate);
        snprintf(eta, sizeof eta, " ETA %ld:%02ld", sec / 60, sec % 60);
    }
    int pct = !unknown && total > 0 ? (int)(done * 100 / total) : 0;
    int avail = term_width() - 1;      /* never the last column: no wrap */
    int width = avail >= 100 ? 30 : avail >= 80 ? 20 : avail >= 64 ? 10 : 0;
    char line[512];
    int len = 0;
    if (width) {
        int fill = (!unknown && total > 0) ? (int)((double)done * width / (double)total) : 0;
        line[len++] = '[';
        for (int i = 0; i < width; i++) line[len++] = i < fill ? '#' : '-';
        line[len++] = ']';
        line[len++] = ' ';
    }
    if (width)
        len += snprintf(line + len, sizeof line - (size_t)len, "%d%% %s/%s %s/s%s %s", pct, d, unknown ? "?" : t, r,
                        eta, names);
    else   /* under 64 columns: the file's name before the rate */
        len += snprintf(line + len, sizeof line - (size_t)len, "%d%% %s/%s%s %s", pct, d, unknown ? "?" : t, eta, names);
    if (len > avail && avail > 3) {
        line[avail - 3] = '.'; line[avail - 2] = '.'; line[avail - 1] = '.';
        line[avail] = '\0';
    }
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    bar_drawn = true;
    interrupt_tty_bar = 1;
}

/* Without a terminal: "NAME: 40% (338.2 MiB of 845.4 MiB, 12.1 MiB/s)" at
 * every 10 % step, or after 15 s without a line. */
static void pipe_line(cli *c, bar_item *it, double t)
{
    if (it->last_line == 0) { it->last_line = t; it->next_pct = 10; }
    int pct = it->total > 0 ? (int)(it->done * 100 / it->total) : -1;
    bool step = pct >= it->next_pct && pct < 100;
    if (!step && t - it->last_line < PIPE_INTERVAL_S) return;
    char d[32], tot[32], r[32];
    ce_bytes_text(d, sizeof d, (double)it->done);
    ce_bytes_text(tot, sizeof tot, (double)it->total);
    ce_bytes_text(r, sizeof r, it->rate);
    char stall[48] = "";
    if (t - it->last_change >= STALL_SHOW_S)
        snprintf(stall, sizeof stall, "; no data for %.0f s", t - it->last_change);
    if (pct >= 0)
        cli_note(c, "%s: %d%% (%s of %s, %s/s%s)", it->name, pct, d, tot, r, stall);
    else
        cli_note(c, "%s: %s (%s/s%s)", it->name, d, r, stall);
    if (pct >= 0) it->next_pct = (pct / 10 + 1) * 10;
    it->last_line = t;
}

static bar_item *item_for(const char *name)
{
    for (size_t i = 0; i < n_items; i++)
        if (strcmp(items[i].name, name) == 0) return &items[i];
    if (n_items == MAX_ITEMS) return NULL;
    bar_item *it = &items[n_items++];
    memset(it, 0, sizeof *it);
    snprintf(it->name, sizeof it->name, "%s", name);
    return it;
}

/* Is stderr a terminal (progress bar), and coloured (no NO_COLOR)?  Asked on
 * the first message or event, not at start-up: env and use print none, and
 * the ioctl is a system call of its own (issue 13). */
static void tty_look(cli *c)
{
    if (c->tty_known) return;
    c->err_tty = isatty(2);
    const char *nc = getenv("NO_COLOR");
    c->color = c->err_tty && !(nc && *nc);
    c->tty_known = true;
}

static void vmsg(cli *c, const char *prefix, const char *color, const char *fmt, va_list ap)
{
    if (c) tty_look(c);
    clear_bar();
    if (c && c->color && color)
        fprintf(stderr, "%scudaenv: %s\033[0m", color, prefix);
    else
        fprintf(stderr, "cudaenv: %s", prefix);
    /* messages quote files, manifests and servers: their control
     * characters are shown escaped, never sent to the terminal */
    char raw[8192], safe[8192];
    vsnprintf(raw, sizeof raw, fmt, ap);
    ce_escape_into(safe, sizeof safe, raw);
    fputs(safe, stderr);
    fputc('\n', stderr);
}

void cli_error(cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(c, "error: ", "\033[31m", fmt, ap);
    va_end(ap);
}

void cli_warn(cli *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(c, "warning: ", "\033[33m", fmt, ap);
    va_end(ap);
}

void cli_note(cli *c, const char *fmt, ...)
{
    if (c && c->ctx.quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vmsg(c, "", NULL, fmt, ap);
    va_end(ap);
}

void cli_print(const char *fmt, ...)
{
    char stack[8192], *text = stack;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(stack, sizeof stack, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof stack) {
        if (!(text = malloc((size_t)n + 1))) return;
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    char *safe = ce_escape_dup(text);
    if (safe) fputs(safe, stdout);
    free(safe);
    if (text != stack) free(text);
}

const char *cli_esc(const char *s)
{
    static char bufs[8][16384];
    static unsigned next;
    char *b = bufs[next++ % 8];
    ce_escape_into(b, sizeof bufs[0], s ? s : "");
    return b;
}

const char *cli_esc_line(const char *s)
{
    static char bufs[8][4096];
    static unsigned next;
    char *b = bufs[next++ % 8], pre[4096];
    size_t o = 0;
    for (s = s ? s : ""; *s && o + 5 < sizeof pre; s++) {
        if (*s == '\n' || *s == '\t') o += (size_t)snprintf(pre + o, sizeof pre - o, "\\x%02x", (unsigned char)*s);
        else pre[o++] = *s;
    }
    pre[o] = '\0';
    ce_escape_into(b, sizeof bufs[0], pre);
    return b;
}

int cli_fail(cli *c, int err)
{
    err = ce_err_public(err);   /* an internal code is never shown (error.h) */
    cli_error(c, "%s", ce_errmsg()[0] ? ce_errmsg() : ce_err_name(err));
    /* a network failure always ends in the three ways out */
    if (err == CE_ERR_DOWNLOAD && !strstr(ce_errmsg(), "https_proxy")) {
        char host[256] = "";
        const char *m = strstr(c->ctx.mirror, "://");
        if (m) snprintf(host, sizeof host, "%.*s", (int)strcspn(m + 3, "/?#"), m + 3);
        if (host[0] && strstr(ce_errmsg(), host))   /* the mirror is what failed: no mirror advice */
            fprintf(stderr, "cudaenv: the mirror failed (CUDAENV_MIRROR=%s): check that it is up and serves these "
                            "files, or unset CUDAENV_MIRROR to download from NVIDIA; behind a proxy: export "
                            "https_proxy=http://HOST:PORT; with files already downloaded: cudaenv install --offline "
                            "...\n", c->ctx.mirror);
        else
            fprintf(stderr, "cudaenv: behind a proxy: export https_proxy=http://HOST:PORT; from a mirror: "
                            "export CUDAENV_MIRROR=URL; with files already downloaded: cudaenv install --offline ...\n");
    }
    return ce_exit_code(err);
}

void cli_render_event(void *ud, const ce_event *ev)
{
    cli *c = ud;
    tty_look(c);
    switch (ev->kind) {
    case CE_EV_WARN: {
        /* the same warning again (one unreachable host, many files) is said once */
        static char last[512];
        const char *t = ev->text ? ev->text : "";
        if (strncmp(last, t, sizeof last - 1) == 0) break;
        snprintf(last, sizeof last, "%s", t);
        cli_warn(c, "%s", t);
        break;
    }
    case CE_EV_NOTE:
    case CE_EV_STEP:
        cli_note(c, "%s", ev->text ? ev->text : "");
        break;
    case CE_EV_INFO:
        /* retries and resumes are worth seeing without -v: the network is slow */
        if (c->ctx.verbose || (ev->text && (strstr(ev->text, "retrying") || strstr(ev->text, "resuming"))))
            cli_note(c, "%s", ev->text ? ev->text : "");
        break;
    case CE_EV_PROGRESS: {
        if (c->ctx.quiet || !ev->item) break;
        bar_item *it = item_for(ev->item);
        if (!it) break;
        double t = ce_mono_s();
        if (it->last_change == 0 || ev->done != it->done) it->last_change = t;
        it->done = ev->done;
        it->total = ev->total;
        it->rate = ev->rate;
        if (!c->err_tty) {
            pipe_line(c, it, t);
        } else if (t - last_draw >= 0.1) {
            last_draw = t;
            draw_bar();
        }
        break;
    }
    case CE_EV_ELAPSED: {
        /* the runfile step: "running cuda_11.8.0_520.61.05_linux.run: 1:23 elapsed" */
        if (c->ctx.quiet || !ev->item) break;
        static long last_pipe_line;
        long sec = (long)(ev->done / 1000);
        const char *base = strrchr(ev->item, '/') ? strrchr(ev->item, '/') + 1 : ev->item;
        if (c->err_tty) {
            char line[256];
            int avail = term_width() - 1;
            int len = snprintf(line, sizeof line, "running %s: %ld:%02ld elapsed", base, sec / 60, sec % 60);
            if (len > avail && avail > 0) line[avail] = '\0';
            fprintf(stderr, "\r\033[K%s", line);
            fflush(stderr);
            bar_drawn = true;
            interrupt_tty_bar = 1;
        } else if (sec / (long)PIPE_INTERVAL_S > last_pipe_line / (long)PIPE_INTERVAL_S) {
            last_pipe_line = sec;
            cli_note(c, "running %s: %ld:%02ld elapsed", base, sec / 60, sec % 60);
        }
        break;
    }
    case CE_EV_DONE: {
        if (!ev->item) break;
        bar_item *it = item_for(ev->item);
        if (it) it->finished = true;
        clear_bar();
        if (ev->text) cli_note(c, "%s", ev->text);
        break;
    }
    }
}
