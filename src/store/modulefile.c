#include "modulefile.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/priv.h"
#include "core/path.h"

bool ce_modfmt_parse(const char *s, ce_modfmt *out)
{
    if (!strcmp(s, "lmod") || !strcmp(s, "lua")) { *out = CE_MODFMT_LMOD; return true; }
    if (!strcmp(s, "tcl")) { *out = CE_MODFMT_TCL; return true; }
    return false;
}

/* A growing string; on failure the buffer is freed and ok cleared. */
typedef struct sbuf { char *p; size_t len, cap; bool ok; } sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    if (!b->ok) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) { b->ok = false; return; }
        if (b->p && b->len + (size_t)n < b->cap) { b->len += (size_t)n; return; }
        size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)n;
        char *np = realloc(b->p, cap);
        if (!np) { free(b->p); b->p = NULL; b->ok = false; return; }
        b->p = np;
        b->cap = cap;
    }
}

/* TensorFlow releases from the receipt, "2.12, 2.14" ("" when none). */
static void receipt_tf(const ce_toolchain *tc, char *out, size_t outsz)
{
    char path[CE_PATH_MAX], *text = NULL;
    size_t len, used = 0;
    out[0] = '\0';
    if (ce_path_join(path, sizeof path, tc->prefix, CE_RECEIPT_NAME) != CE_OK) return;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int rrc = ce_file_read(path, 64u * 1024 * 1024, &text, &len);
    ce_quiet_end(&q);
    if (rrc != CE_OK) return;
    cJSON *r = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *tf = cJSON_GetObjectItemCaseSensitive(r, "tensorflow"), *e;
    cJSON_ArrayForEach(e, tf) {
        if (cJSON_IsString(e) && used + strlen(e->valuestring) + 3 < outsz)
            used += (size_t)snprintf(out + used, outsz - used, "%s%s", used ? ", " : "", e->valuestring);
    }
    cJSON_Delete(r);
}

/* Characters a module file cannot carry inside its quoting. */
static bool quotable(const char *s)
{
    return strpbrk(s, "\"\\{}[]$\n\r`") == NULL;
}

/* Bytes at p that form one control character (C0 but tab, DEL, UTF-8 C1
 * such as U+009B CSI): 0 when p is not one. */
static size_t control_len(const unsigned char *p)
{
    if (*p < 0x20 && *p != '\t' && *p != '\n') return 1;
    if (*p == 0x7f) return 1;
    if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) return 2;
    return 0;
}

/* Every field (receipt text, names, paths) goes into a module file through
 * one of these two, as a double-quoted string in which nothing is
 * substituted or run: `]`, `[exec ...]`, `$var`, quotes, braces and
 * newlines are inert.  A control character becomes the visible text \xNN
 * (its backslash escaped), as everywhere cudaenv prints what others wrote
 * (core/trust.h): `module help` sends no escape sequence to a terminal.
 * Tcl: \ " $ [ ] { } backslashed, newline \n. */
static void sb_tcl(sbuf *b, const char *s)
{
    sb_add(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t n = control_len(p);
        if (n == 2) { sb_add(b, "\\\\x%02x\\\\x%02x", p[0], p[1]); p++; }
        else if (n) sb_add(b, "\\\\x%02x", *p);
        else if (*p == '\n') sb_add(b, "\\n");
        else if (strchr("\\\"$[]{}", *p)) sb_add(b, "\\%c", *p);
        else sb_add(b, "%c", *p);
    }
    sb_add(b, "\"");
}

/* Lua: \ and " backslashed, newline \n. */
static void sb_lua(sbuf *b, const char *s)
{
    sb_add(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        size_t n = control_len(p);
        if (n == 2) { sb_add(b, "\\\\x%02x\\\\x%02x", p[0], p[1]); p++; }
        else if (n) sb_add(b, "\\\\x%02x", *p);
        else if (*p == '\\' || *p == '"') sb_add(b, "\\%c", *p);
        else if (*p == '\n') sb_add(b, "\\n");
        else sb_add(b, "%c", *p);
    }
    sb_add(b, "\"");
}

/* One call in either language: NAME("a: " .. value) in Lua, NAME "a: value" in Tcl. */
static void sb_call(sbuf *b, ce_modfmt fmt, const char *call, const char *label, const char *value)
{
    char text[8192];
    snprintf(text, sizeof text, "%s%s", label, value);
    if (fmt == CE_MODFMT_LMOD) {
        sb_add(b, "%s(", call);
        sb_lua(b, text);
        sb_add(b, ")\n");
    } else {
        sb_add(b, "%s ", call);
        sb_tcl(b, text);
        sb_add(b, "\n");
    }
}

int ce_modulefile_render(const ce_toolchain *tc, ce_modfmt fmt, char **out)
{
    *out = NULL;
    if (!quotable(tc->prefix))
        return ce_fail(CE_ERR_USAGE, "cannot write a module file for %s: its path contains one of "
                       "\" \\ { } [ ] $ ` or a newline; use a plainer CUDAENV_ROOT", tc->prefix);
    char tf[512], desc[768], help[6144];
    receipt_tf(tc, tf, sizeof tf);
    snprintf(desc, sizeof desc, "CUDA %s%s%s%s%s", tc->cuda, tc->cudnn[0] ? " + cuDNN " : "",
             tc->cudnn, tf[0] ? " (TensorFlow " : "", tf[0] ? tf : "");
    if (tf[0]) strncat(desc, ")", sizeof desc - strlen(desc) - 1);
    snprintf(help, sizeof help, "%s, installed by cudaenv in\n  %s\n"
             "Puts bin/ and lib64/ first in PATH and LD_LIBRARY_PATH, lib64/ and\n"
             "lib64/stubs first in LIBRARY_PATH (the linker's) and sets CUDA_HOME,\n"
             "CUDA_PATH%s.  cudaenv verify %s checks it on the GPU.",
             desc, tc->prefix, tc->cudnn[0] ? " and CUDNN_PATH" : "", tc->name);
    sbuf b = { .ok = true };
    if (fmt == CE_MODFMT_LMOD) {
        sb_add(&b, "-- %s %s: cudaenv modulefile --format lmod; do not edit\n", CE_MODULEFILE_MARK, CE_VERSION);
        sb_call(&b, fmt, "help", "", help);
        sb_add(&b, "whatis(\"Name: cuda\")\n");
        sb_call(&b, fmt, "whatis", "Toolchain: ", tc->name);
        sb_call(&b, fmt, "whatis", "CUDA: ", tc->cuda);
        if (tc->cudnn[0]) sb_call(&b, fmt, "whatis", "cuDNN: ", tc->cudnn);
        if (tf[0]) sb_call(&b, fmt, "whatis", "TensorFlow: ", tf);
        sb_call(&b, fmt, "whatis", "Description: ", desc);
        sb_add(&b, "family(\"cuda\")\nlocal prefix = ");
        sb_lua(&b, tc->prefix);
        sb_add(&b, "\nprepend_path(\"PATH\", prefix .. \"/bin\")\n"
                   "prepend_path(\"LD_LIBRARY_PATH\", prefix .. \"/lib64\")\n"
                   "prepend_path(\"LIBRARY_PATH\", prefix .. \"/lib64/stubs\")\n"
                   "prepend_path(\"LIBRARY_PATH\", prefix .. \"/lib64\")\n"
                   "setenv(\"CUDA_HOME\", prefix)\nsetenv(\"CUDA_PATH\", prefix)\n");
        if (tc->cudnn[0]) sb_add(&b, "setenv(\"CUDNN_PATH\", prefix)\n");
    } else {
        sb_add(&b, "#%%Module1.0\n## %s %s: cudaenv modulefile --format tcl; do not edit\n",
               CE_MODULEFILE_MARK, CE_VERSION);
        sb_add(&b, "proc ModulesHelp { } {\n    puts stderr ");
        sb_tcl(&b, help);
        sb_add(&b, "\n}\n");
        sb_call(&b, fmt, "module-whatis", "", desc);
        sb_add(&b, "conflict cuda\nset prefix ");
        sb_tcl(&b, tc->prefix);
        sb_add(&b, "\nprepend-path PATH $prefix/bin\nprepend-path LD_LIBRARY_PATH $prefix/lib64\n"
                   "prepend-path LIBRARY_PATH $prefix/lib64/stubs\nprepend-path LIBRARY_PATH $prefix/lib64\n"
                   "setenv CUDA_HOME $prefix\nsetenv CUDA_PATH $prefix\n");
        if (tc->cudnn[0]) sb_add(&b, "setenv CUDNN_PATH $prefix\n");
    }
    if (!b.ok) return ce_fail(CE_ERR_NOMEM, "out of memory writing a module file");
    *out = b.p;
    return CE_OK;
}

void ce_modulefile_name(const char *toolchain, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s", toolchain);
    for (char *p = out; *p; p++)
        if (*p == '+') *p = '-';
}

/* DIR/cuda held by fd (core/priv.h): as root walked from / with every
 * directory root's, so a user's link at DIR/cuda (or above) redirects no
 * write or removal. */
static int open_sub(const char *dir, char *sub, size_t subsz, ce_priv_tree *t)
{
    char why[4400 + 256];
    if ((size_t)snprintf(sub, subsz, "%s/cuda", dir) >= subsz)
        return ce_fail(CE_ERR_OTHER, "module directory path too long: %s", dir);
    if (!ce_priv_dir_make(t, sub, 0755, why, sizeof why)) return CE_OK;
    bool refused = errno == EPERM || errno == ELOOP;
    return ce_fail(refused ? CE_ERR_PERM : errno == EACCES ? CE_ERR_PERM : CE_ERR_IO,
                   "cannot write module files in %s: %s%s", sub, why,
                   refused ? "; as root module files are written only into directories only root can change "
                             "(chown root:root and chmod go-w it, or give a root-owned --to DIR)" : "");
}

/* The first bytes of name beneath dfd, never through a link ("" when none). */
static void head_at(int dfd, const char *name, char *head, size_t n)
{
    head[0] = '\0';
    int fd = ce_priv_openat(dfd, name, O_RDONLY | O_NONBLOCK, 0);
    if (fd < 0) return;
    struct stat st;
    ssize_t k = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, n - 1) : -1;
    head[k > 0 ? k : 0] = '\0';
    close(fd);
}

static int write_in(const ce_toolchain *tc, ce_modfmt fmt, int dfd, const char *sub, char *path,
                    size_t pathsz, bool *changed)
{
    char mod[128], name[160], other[160];
    ce_modulefile_name(tc->name, mod, sizeof mod);
    snprintf(name, sizeof name, "%s%s", mod, fmt == CE_MODFMT_LMOD ? ".lua" : "");
    snprintf(other, sizeof other, "%s%s", mod, fmt == CE_MODFMT_LMOD ? "" : ".lua");
    char p[4400];
    if (ce_path_join(p, sizeof p, sub, name) != CE_OK)
        return ce_fail(CE_ERR_OTHER, "module directory path too long: %s", sub);
    int rc;
    char *text, *old = NULL;
    size_t oldlen = 0;
    if ((rc = ce_modulefile_render(tc, fmt, &text))) return rc;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int fd = ce_priv_openat(dfd, name, O_RDONLY | O_NONBLOCK, 0);
    bool same = fd >= 0 && ce_file_read_fd(fd, p, 1u << 20, &old, &oldlen) == CE_OK &&
                oldlen == strlen(text) && memcmp(old, text, oldlen) == 0;
    ce_quiet_end(&q);
    free(old);
    rc = same ? CE_OK : ce_file_write_atomic_at(dfd, sub, name, text, strlen(text), 0644);
    free(text);
    if (!rc && changed) *changed = !same;
    /* the other format's file of the same toolchain would shadow or duplicate it */
    char head[256];
    if (!rc) {
        head_at(dfd, other, head, sizeof head);
        if (strstr(head, CE_MODULEFILE_MARK) && unlinkat(dfd, other, 0) == 0 && changed) *changed = true;
    }
    if (!rc && path) snprintf(path, pathsz, "%s", p);
    return rc;
}

int ce_modulefile_write(const ce_toolchain *tc, ce_modfmt fmt, const char *dir,
                        char *path, size_t pathsz, bool *changed)
{
    char sub[4300];
    ce_priv_tree t;
    int rc = open_sub(dir, sub, sizeof sub, &t);
    if (rc) return rc;
    rc = write_in(tc, fmt, t.fd, sub, path, pathsz, changed);
    ce_priv_tree_close(&t);
    return rc;
}

int ce_modulefile_write_all(ce_ctx *ctx, ce_modfmt fmt, const char *dir, size_t *written,
                            size_t *changed, size_t *removed)
{
    ce_toolchain *v;
    size_t n, nw = 0, nc = 0, nr = 0;
    int rc = ce_store_list(ctx, &v, &n);
    if (rc) return rc;
    char sub[4300];
    ce_priv_tree t;
    snprintf(sub, sizeof sub, "%s/cuda", dir);
    if (!n && !ce_is_dir(sub)) {   /* nothing to write, nothing to remove: no directory made */
        free(v);
        if (written) *written = 0;
        if (changed) *changed = 0;
        if (removed) *removed = 0;
        return CE_OK;
    }
    if ((rc = open_sub(dir, sub, sizeof sub, &t))) { free(v); return rc; }
    for (size_t i = 0; i < n && !rc; i++) {
        bool ch = false;
        if (!(rc = write_in(&v[i], fmt, t.fd, sub, NULL, 0, &ch))) nw++;
        nc += ch;
    }
    int dfd = rc ? -1 : dup(t.fd);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d && dfd >= 0) close(dfd);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char name[256];
        snprintf(name, sizeof name, "%s", e->d_name);
        size_t l = strlen(name);
        if (l > 4 && !strcmp(name + l - 4, ".lua")) name[l - 4] = '\0';
        bool installed = false;
        for (size_t i = 0; i < n && !installed; i++) {
            char mod[128];
            ce_modulefile_name(v[i].name, mod, sizeof mod);
            installed = !strcmp(mod, name);
        }
        char head[256];
        if (installed) continue;
        head_at(t.fd, e->d_name, head, sizeof head);
        if (strstr(head, CE_MODULEFILE_MARK) && unlinkat(t.fd, e->d_name, 0) == 0) {
            ce_emit(ctx, CE_EV_INFO, NULL, "removed %s/%s (toolchain %s is not installed)", sub, e->d_name, name);
            nr++;
        }
    }
    if (d) closedir(d);
    ce_priv_tree_close(&t);
    free(v);
    if (written) *written = nw;
    if (changed) *changed = nc;
    if (removed) *removed = nr;
    return rc;
}
