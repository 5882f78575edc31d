/* The one place that draws: messages on stderr, a progress bar on a terminal
 * only (downloads running in parallel share one line), nothing on stdout. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "core/trust.h"

#define MAX_ITEMS 16

typedef struct bar_item { char name[96]; long long done, total; double rate; bool finished; } bar_item;
static bar_item items[MAX_ITEMS];
static size_t n_items;
static bool bar_drawn;
static double last_draw;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void clear_bar(void)
{
    if (bar_drawn) {
        fputs("\r\033[K", stderr);
        bar_drawn = false;
    }
}

static void human(char *out, size_t n, double bytes)
{
    const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    while (bytes >= 1024 && i < 4) { bytes /= 1024; i++; }
    snprintf(out, n, i ? "%.1f %s" : "%.0f %s", bytes, u[i]);
}

static void draw_bar(void)
{
    long long done = 0, total = 0;
    double rate = 0;
    size_t active = 0;
    bool unknown = false;
    for (size_t i = 0; i < n_items; i++) {
        done += items[i].done;
        if (items[i].total < 0) unknown = true; else total += items[i].total;
        if (!items[i].finished) { rate += items[i].rate; active++; }
    }
    char d[32], t[32], r[32], eta[32] = "--:--";
    human(d, sizeof d, (double)done);
    human(t, sizeof t, (double)total);
    human(r, sizeof r, rate);
    if (!unknown && rate > 0 && total > done) {
        long s = (long)((double)(total - done) / rate);
        snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
    }
    int width = 30, fill = (!unknown && total > 0) ? (int)((double)done * width / (double)total) : 0;
    char barbuf[64];
    for (int i = 0; i < width; i++) barbuf[i] = i < fill ? '#' : '-';
    barbuf[width] = '\0';
    fprintf(stderr, "\r\033[K[%s] %s / %s  %s/s  ETA %s  (%zu active)", barbuf, d, unknown ? "?" : t, r, eta, active);
    fflush(stderr);
    bar_drawn = true;
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

static void vmsg(cli *c, const char *prefix, const char *color, const char *fmt, va_list ap)
{
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

const char *cli_esc(const char *s)
{
    static char bufs[8][16384];
    static unsigned next;
    char *b = bufs[next++ % 8];
    ce_escape_into(b, sizeof bufs[0], s ? s : "");
    return b;
}

int cli_fail(cli *c, int err)
{
    cli_error(c, "%s", c->ctx.err[0] ? c->ctx.err : ce_err_name(err));
    return ce_exit_code(err);
}

void cli_render_event(void *ud, const ce_event *ev)
{
    cli *c = ud;
    switch (ev->kind) {
    case CE_EV_WARN:
        cli_warn(c, "%s", ev->text ? ev->text : "");
        break;
    case CE_EV_NOTE:
    case CE_EV_STEP:
        cli_note(c, "%s", ev->text ? ev->text : "");
        break;
    case CE_EV_INFO:
        if (c->ctx.verbose) cli_note(c, "%s", ev->text ? ev->text : "");
        break;
    case CE_EV_PROGRESS: {
        if (!c->err_tty || c->ctx.quiet || !ev->item) break;
        bar_item *it = item_for(ev->item);
        if (!it) break;
        it->done = ev->done;
        it->total = ev->total;
        it->rate = ev->rate;
        double t = now_s();
        if (t - last_draw >= 0.1) {
            last_draw = t;
            draw_bar();
        }
        break;
    }
    case CE_EV_DONE: {
        if (!ev->item) break;
        bar_item *it = c->err_tty ? item_for(ev->item) : NULL;
        if (it) it->finished = true;
        clear_bar();
        if (ev->text) cli_note(c, "%s", ev->text);
        break;
    }
    }
}
