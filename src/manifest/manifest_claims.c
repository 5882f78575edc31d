/* The manifest's signed claims (manifest.h): "serial", "source" and
 * "expires", the top-level values that tie a signed manifest to the place it
 * is served from and to its turn in the publisher's sequence.  Each is
 * optional here; install/manifest_fetch.c says when one is required. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manifest_int.h"

/* YYYY-MM-DD with a real month and day: *t is its first second (UTC). */
static bool parse_day(const char *s, time_t *t)
{
    int y, mo, d;
    char tail;
    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-' || sscanf(s, "%4d-%2d-%2d%c", &y, &mo, &d, &tail) != 3)
        return false;
    for (int i = 0; i < 10; i++)
        if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) return false;
    struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d };
    time_t v = timegm(&tm);
    struct tm back;
    if (v == (time_t)-1 || !gmtime_r(&v, &back) || back.tm_year != y - 1900 || back.tm_mon != mo - 1 ||
        back.tm_mday != d)
        return false;   /* 2026-02-30 */
    *t = v;
    return true;
}

bool ce_manifest_date_past(const char *day, time_t now)
{
    time_t t;
    return day && parse_day(day, &t) && now >= t + 86400;
}

int mf_parse_claims(parser *p, const cJSON *doc, ce_manifest *m)
{
    m->serial = -1;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "serial");
    if (s && !cJSON_IsNull(s)) {
        size_t n = mf_path_push(p, "serial");   /* popped on success only: an error names it */
        /* an integer a double holds exactly: 0 .. 2^53 */
        if (!cJSON_IsNumber(s) || s->valuedouble < 0 || s->valuedouble > 9007199254740992.0 ||
            s->valuedouble != (double)(long long)s->valuedouble)
            return mf_bad(p, "expected a whole number from 0 to 2^53 (it grows with every publication)");
        m->serial = (long long)s->valuedouble;
        mf_path_pop(p, n);
    }
    int rc = mf_get_str(p, doc, "source", false, &m->source);
    if (!rc && m->source && !m->source[0]) {
        mf_path_push(p, "source");
        return mf_bad(p, "empty; the URL the manifest is served at");
    }
    if (!rc) rc = mf_get_str(p, doc, "expires", false, &m->expires);
    time_t t;
    if (!rc && m->expires && !parse_day(m->expires, &t)) {
        mf_path_push(p, "expires");
        return mf_bad(p, "'%s' is not a date (YYYY-MM-DD)", m->expires);
    }
    return rc;
}
