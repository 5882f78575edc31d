/* Python as root by construction (issue 36): see ce_py_trusted in pyrun.h.
 * What a Python run as root reads before and while the probe imports
 * anything is checked here, without running anything a user owns:
 *  1. the interpreter as given (each component as written: a symlink on the
 *     way must be root's, everything else pass the rule) and resolved (the
 *     chain rule of priv.h);
 *  2. the venv: pyvenv.cfg beside bin/ (where Python looks: the given
 *     path's directory and the one above it) and the directory its home
 *     names;
 *  3. the base interpreter's own library: its ../lib/python* (the prefix
 *     Python finds from where it lives) before it is started at all;
 *  4. then the resolved (root-owned) interpreter is run with -I -S, so
 *     neither a venv nor a .pth file takes part, to say its sys.path and
 *     site directories, and the site directories of the venv;
 *  5. every one of those that exists is walked whole (every file and
 *     directory below: the .pth files, the framework packages), and each
 *     path a .pth file adds too.
 * The first path that fails is named. */
#include "pyrun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirscan.h"
#include "priv.h"
#include "proc.h"
#include "path.h"

typedef struct pyt {
    char *why;
    size_t whysz;
    const char *python;
    ce_priv_cache cache;
} pyt;

static int refuse(pyt *t, const char *path, const char *reason)
{
    snprintf(t->why, t->whysz, "the Python %s is not root's to run: %s is %s; run the same command as the owner of "
             "that Python (--for, verify --framework and jupyter install need no root), or name a root-owned Python",
             t->python, path, reason ? reason : strerror(errno));
    errno = EPERM;
    return -1;
}

/* The resolved path's chain (priv.h's rule). */
static int chain(pyt *t, const char *path)
{
    char real[PATH_MAX], cur[PATH_MAX];
    const char *r;
    if (!realpath(path, real)) return refuse(t, path, NULL);
    if (ce_priv_chain_walk(real, cur, &t->cache, &r)) return refuse(t, cur, r);
    return 0;
}

/* Each component of the absolute path as written: a symlink must be root's
 * (where it points is checked by chain), anything else pass the rule. */
static int as_given(pyt *t, const char *path)
{
    char cur[PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof cur) return refuse(t, path, "too long");
    for (size_t i = 1; i <= len; i++) {
        if (i != len && path[i] != '/') continue;
        memcpy(cur, path, i);
        cur[i] = '\0';
        struct stat st;
        if (lstat(cur, &st) != 0) return refuse(t, cur, NULL);
        if (S_ISLNK(st.st_mode)) {
            if (st.st_uid != 0) {
                char r[64];
                snprintf(r, sizeof r, "a symlink owned by uid %u, not root", (unsigned)st.st_uid);
                return refuse(t, cur, r);
            }
            continue;
        }
        const char *r = ce_priv_stat_reason(&st, i != len);
        if (r) return refuse(t, cur, r);
    }
    return 0;
}

static int walk(pyt *t, int dfd, char *path, size_t plen, int depth);

/* One entry below a checked directory (never sticky there). */
static int entry(pyt *t, int dfd, const char *name, char *path, size_t plen, unsigned char type, int depth)
{
    size_t nl = strlen(name);
    if (plen + 1 + nl >= PATH_MAX) return refuse(t, path, "too deep a path");
    path[plen] = '/';
    memcpy(path + plen + 1, name, nl + 1);
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return refuse(t, path, NULL);
    int rc = 0;
    if (S_ISLNK(st.st_mode)) {
        if (st.st_uid != 0) rc = refuse(t, path, "a symlink not owned by root");
        else if (access(path, F_OK) == 0) rc = chain(t, path);   /* where it points (a dangling one imports nothing) */
    } else {
        const char *r = ce_priv_stat_reason(&st, false);
        if (r) rc = refuse(t, path, r);
        else if (S_ISDIR(st.st_mode)) {
            int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            rc = sub < 0 ? refuse(t, path, NULL) : walk(t, sub, path, plen + 1 + nl, depth + 1);
        }
    }
    (void)type;
    path[plen] = '\0';
    return rc;
}

/* Every entry below the directory dfd (path: its name, PATH_MAX bytes);
 * closes dfd. */
static int walk(pyt *t, int dfd, char *path, size_t plen, int depth)
{
    if (depth > 48) {
        close(dfd);
        return refuse(t, path, "nested too deep to check");
    }
    ce_dirscan s;
    int rc = ce_dirscan_open(&s, dfd, ".");
    close(dfd);
    if (rc) return refuse(t, path, NULL);
    const char *name;
    unsigned char type;
    while (!rc && (name = ce_dirscan_next(&s, &type)))
        if (strcmp(name, ".") && strcmp(name, "..")) rc = entry(t, s.fd, name, path, plen, type, depth);
    ce_dirscan_close(&s);
    return rc;
}

/* A directory Python imports from: its chain, then everything below it. */
static int tree(pyt *t, const char *dir)
{
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(dir, real) || stat(real, &st) != 0) return 0;   /* not there: nothing comes from it */
    if (chain(t, real)) return -1;
    if (!S_ISDIR(st.st_mode)) return 0;   /* a zip file: checked as a file */
    int fd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return refuse(t, real, NULL);
    return walk(t, fd, real, strlen(real), 0);
}

/* The paths a site directory's .pth files add (lines that are no comment and
 * no "import"), relative to the directory, each a tree. */
static int pth_paths(pyt *t, const char *dir)
{
    ce_dirscan s;
    if (ce_dirscan_open(&s, AT_FDCWD, dir)) return 0;
    const char *name;
    unsigned char type;
    int rc = 0;
    while (!rc && (name = ce_dirscan_next(&s, &type))) {
        size_t l = strlen(name);
        if (l < 5 || strcmp(name + l - 4, ".pth")) continue;
        char f[PATH_MAX], line[PATH_MAX], p[PATH_MAX * 2];
        if (ce_path_join(f, sizeof f, dir, name) != CE_OK) continue;
        FILE *fp = fopen(f, "re");
        while (!rc && fp && fgets(line, sizeof line, fp)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (!line[0] || line[0] == '#' || !strncmp(line, "import ", 7) || !strncmp(line, "import\t", 7)) continue;
            snprintf(p, sizeof p, "%s%s%s", line[0] == '/' ? "" : dir, line[0] == '/' ? "" : "/", line);
            rc = tree(t, p);
        }
        if (fp) fclose(fp);
    }
    ce_dirscan_close(&s);
    return rc;
}

/* The library directories LIB/python*, each a tree; with pth, the paths the
 * .pth files of each one's site-packages add too (a venv's: Debian's site
 * names a prefix's dist-packages, a venv uses site-packages). */
static int lib_dirs(pyt *t, const char *lib, bool pth)
{
    ce_dirscan s;
    if (ce_dirscan_open(&s, AT_FDCWD, lib)) return 0;
    const char *name;
    unsigned char type;
    int rc = 0;
    char p[PATH_MAX + 256];
    while (!rc && (name = ce_dirscan_next(&s, &type)))
        if (!strncmp(name, "python", 6) && ce_path_join(p, sizeof p, lib, name) == CE_OK) {
            rc = tree(t, p);
            if (!rc && pth && strlen(p) + 16 < sizeof p) rc = pth_paths(t, strcat(p, "/site-packages"));
        }
    ce_dirscan_close(&s);
    return rc;
}

/* The venv Python would take: pyvenv.cfg in the given path's directory or
 * the one above (both resolved, as the kernel opens them).  venv "" when
 * none; home: the directory its home key names ("" when none). */
static int find_venv(pyt *t, const char *given, char *venv, char *home, bool *system_site)
{
    venv[0] = home[0] = '\0';
    *system_site = false;
    char dir[PATH_MAX], up[PATH_MAX + 4], cand[PATH_MAX], cfg[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", given);
    char *slash = strrchr(dir, '/');
    if (!slash) return 0;
    *slash = '\0';
    snprintf(up, sizeof up, "%s/..", dir[0] ? dir : "/");
    const char *tries[2] = { dir[0] ? dir : "/", up };
    for (int i = 0; i < 2; i++) {
        struct stat st;
        if (!realpath(tries[i], cand)) continue;
        snprintf(cfg, sizeof cfg, "%s/pyvenv.cfg", strcmp(cand, "/") ? cand : "");
        if (lstat(cfg, &st) != 0) continue;
        char cur[PATH_MAX];
        const char *r;
        if (ce_priv_chain_walk(cfg, cur, &t->cache, &r)) return refuse(t, cur, r);   /* a symlink at the end too */
        snprintf(venv, PATH_MAX, "%s", cand);
        FILE *fp = fopen(cfg, "re");
        char line[PATH_MAX + 64];
        while (fp && fgets(line, sizeof line, fp)) {
            line[strcspn(line, "\r\n")] = '\0';
            char *eq = strchr(line, '=');
            if (!eq) continue;
            char *k = line, *v = eq + 1, *e = eq;
            while (e > k && (e[-1] == ' ' || e[-1] == '\t')) e--;
            *e = '\0';
            while (*v == ' ' || *v == '\t') v++;
            if (!strcmp(k, "home")) snprintf(home, PATH_MAX, "%s", v);
            else if (!strcmp(k, "include-system-site-packages")) *system_site = !strcasecmp(v, "true");
        }
        if (fp) fclose(fp);
        return home[0] == '/' ? chain(t, home) : 0;
    }
    return 0;
}

/* Asked of the resolved base interpreter, with -I -S (no venv: it is run by
 * its own path; no .pth: no site): its sys.path, then a line "--", then its
 * site directories and the venv's (argv[1]) as site would make them. */
static const char query[] =
    "import sys, site\n"
    "for p in sys.path: print(p)\n"
    "print('--')\n"
    "for p in site.getsitepackages(): print(p)\n"
    "print('--')\n"
    "if sys.argv[1]:\n"
    "    for p in site.getsitepackages([sys.argv[1]]): print(p)\n";

static int ask(pyt *t, const char *real, const char *venv, bool system_site)
{
    char *argv[] = { (char *)real, "-I", "-S", "-c", (char *)query, (char *)venv, NULL };
    ce_proc p = { .path = real, .argv = argv, .cwd = "/", .timeout_s = 30, .env_add = NULL };
    ce_proc_result res;
    int rc = ce_proc_run(NULL, &p, &res);
    if (rc != CE_OK) {
        snprintf(t->why, t->whysz, "%s", res.why);
        errno = EPERM;
        return -1;
    }
    if (res.code != 0 || !res.out) {
        /* a root-owned program (its chain passed) that is no Python, run with -I
         * -S from /: nothing of a user's decided this, nothing is imported, and
         * its real run fails the same way (verify: framework.script-failed) */
        ce_proc_result_free(&res);
        return 0;
    }
    int part = 0;
    char *save = NULL;
    rc = 0;
    for (char *l = strtok_r(res.out, "\n", &save); l && !rc; l = strtok_r(NULL, "\n", &save)) {
        if (!strcmp(l, "--")) { part++; continue; }
        if (l[0] != '/') continue;
        if (part == 1 && venv[0] && !system_site) continue;   /* the base's site: not in this venv's sys.path */
        rc = tree(t, l);
        if (!rc && part > 0) rc = pth_paths(t, l);
    }
    ce_proc_result_free(&res);
    return rc;
}

int ce_py_trusted(const char *python, char *why, size_t whysz)
{
    if (!ce_priv()) return 0;
    pyt t = { .why = why, .whysz = whysz, .python = python };
    char real[PATH_MAX], venv[PATH_MAX], home[PATH_MAX], lib[PATH_MAX + 8];
    bool system_site = false;
    int rc = -1;
    if (python[0] != '/') refuse(&t, python, "not an absolute path");
    else if (as_given(&t, python) || chain(&t, python) || !realpath(python, real)) {
    } else if (find_venv(&t, python, venv, home, &system_site)) {
    } else {
        /* the base's library, before it starts: REAL/../../lib */
        snprintf(lib, sizeof lib, "%s", real);
        char *s = strrchr(lib, '/');
        if (s) *s = '\0';
        s = strrchr(lib, '/');
        if (s) snprintf(s, sizeof lib - (size_t)(s - lib), "/lib");
        if (!lib_dirs(&t, lib[0] ? lib : "/lib", false)) rc = ask(&t, real, venv, system_site);
        if (!rc && venv[0]) {
            /* the venv's own site directories, whatever the base says */
            char vl[PATH_MAX + 8];
            snprintf(vl, sizeof vl, "%s/lib", venv);
            rc = tree(&t, vl);
            if (!rc) rc = lib_dirs(&t, vl, true);
        }
    }
    ce_priv_cache_free(&t.cache);
    return rc;
}
