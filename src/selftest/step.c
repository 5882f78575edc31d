/* The helpers every step uses to record its result, bind symbols, and
 * draw test data. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "st_int.h"

void st_note(st_step *s, const char *fmt, ...)
{
    size_t used = strlen(s->evidence);
    if (used + 2 >= sizeof s->evidence) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->evidence + used, sizeof s->evidence - used - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    used = strlen(s->evidence);
    s->evidence[used] = '\n';
    s->evidence[used + 1] = '\0';
}

static void set_summary(st_step *s, const char *fmt, va_list ap)
{
    vsnprintf(s->summary, sizeof s->summary, fmt, ap);
}

void st_pass(st_step *s, const char *fmt, ...)
{
    if (s->status == ST_FAILED) return;  /* a failure recorded earlier stands */
    va_list ap;
    va_start(ap, fmt);
    set_summary(s, fmt, ap);
    va_end(ap);
    s->status = ST_PASSED;
}

void st_failf(st_step *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (s->status == ST_FAILED) {
        /* keep the first summary; the later failure becomes evidence */
        char line[640], also[660];
        vsnprintf(line, sizeof line, fmt, ap);
        snprintf(also, sizeof also, "also: %s\n", line);
        /* a problem seen again (the loader's late pass) is said once */
        bool seen = !strcmp(line, s->summary) || !strncmp(s->evidence, also, strlen(also));
        for (const char *p = strchr(s->evidence, '\n'); p && !seen; p = strchr(p + 1, '\n'))
            seen = !strncmp(p + 1, also, strlen(also));
        if (!seen) st_note(s, "also: %s", line);
    } else {
        set_summary(s, fmt, ap);
    }
    va_end(ap);
    s->status = ST_FAILED;
}

void st_skip(st_step *s, bool nogpu, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_summary(s, fmt, ap);
    va_end(ap);
    s->status = ST_SKIPPED;
    s->nogpu = nogpu;
}

void st_bind(void *h, const char *name, void *slot, char *missing, size_t msz)
{
    void *p = h ? dlsym(h, name) : NULL;
    memcpy(slot, &p, sizeof p);
    if (!p && missing) {
        size_t used = strlen(missing);
        snprintf(missing + used, msz - used, "%s%s", used ? ", " : "", name);
    }
}

int st_cuda_num(const char *dotted)
{
    int maj = 0, min = 0;
    if (sscanf(dotted, "%d.%d", &maj, &min) < 1) return 0;
    return maj * 1000 + min * 10;
}

void st_rng_seed(st_rng *g)
{
    unsigned long long s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
        s = (unsigned long long)ce_mono_ms() * 0x9E3779B97F4A7C15ull;
    g->s = s ? s : 0x2545F4914F6CDD1Dull;
}

float st_rng_float(st_rng *g)
{
    g->s ^= g->s >> 12;
    g->s ^= g->s << 25;
    g->s ^= g->s >> 27;
    unsigned long long x = g->s * 0x2545F4914F6CDD1Dull;
    return (float)((double)(x >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}
