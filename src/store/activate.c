#include "activate.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "core/file.h"
#include "manifest/resolve.h"
#include "userstate.h"

const char *ce_origin_name(ce_origin o)
{
    switch (o) {
    case CE_ORIGIN_SHELL: return "shell";
    case CE_ORIGIN_FILE: return CE_VERSION_FILE;
    case CE_ORIGIN_GLOBAL: return "global";
    case CE_ORIGIN_SYSTEM: return "system";
    }
    return "?";
}

/* Characters a spec can contain ("tf-2.14", "11.8.0+cudnn8.7", "tensorflow==2.14"). */
static bool spec_chars(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(".+-=_", *s)) return false;
    return true;
}

int ce_spec_file_unresolved(ce_ctx *ctx, const char *shown)
{
    /* never echoed: the file may be a symlink to a token (~/.vault-token,
     * ~/.git-credentials) or carry terminal escapes; one message and one
     * exit code whatever the content, so neither says what it is */
    return ce_fail(ctx, CE_ERR_NOTFOUND, "%s: no such toolchain or spec (content not shown); see what it names "
                   "with: cat %s, then install that (cudaenv install VERSION) or pin an installed one (cudaenv list)",
                   shown, shown);
}

int ce_spec_file_showable(ce_ctx *ctx, const char *shown, const char *spec)
{
    ce_spec parsed;
    if (!strcmp(spec, "system") || ce_spec_parse(ctx, spec, &parsed) == CE_OK) return CE_OK;
    return ce_spec_file_unresolved(ctx, shown);
}

/* The spec in the first CE_SPEC_FILE_MAX bytes of a spec file (n of them
 * in data, NUL-terminated); shown names the file in messages. */
static int spec_parse_head(ce_ctx *ctx, const char *shown, char *data, size_t n, char *spec, size_t specsz)
{
    /* the first line that is not blank or a comment, trimmed; it must end
     * within the bytes read: a longer file is never taken for the shorter
     * spec its first bytes spell */
    char *line = data, *found = NULL;
    bool cut = false;
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        else cut = n == CE_SPEC_FILE_MAX;
        while (isspace((unsigned char)*line)) line++;
        char *end = line + strlen(line);
        while (end > line && isspace((unsigned char)end[-1])) *--end = '\0';
        if (*line && *line != '#') { found = line; break; }
        line = nl ? nl + 1 : NULL;
    }
    if (!found && !cut)
        return ce_fail(ctx, CE_ERR_USAGE, "%s names no toolchain (expected one line such as 11.8 or tf-2.14)", shown);
    if (cut || strlen(found) >= specsz || !spec_chars(found)) return ce_spec_file_unresolved(ctx, shown);
    snprintf(spec, specsz, "%s", found);
    return CE_OK;
}

/* The head of a spec file open at fd (with O_NONBLOCK, which stays set: a
 * read that would block is "not a spec", never a hung prompt): a regular
 * file (FIFOs and devices have no size to trust) and not on procfs or sysfs,
 * whose files are made up on reading, may block (/proc/kmsg) or consume what
 * they return; at most CE_SPEC_FILE_MAX bytes.  fd is closed. */
static int spec_fd_head(ce_ctx *ctx, int fd, const char *shown, char *data, size_t *len)
{
    struct stat st;
    struct statfs sf;
    int rc = CE_OK;
    size_t n = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = ce_fail(ctx, CE_ERR_IO, "%s is not a regular file (a FIFO, device or directory); cudaenv reads a "
                     "spec only from a regular file: remove or replace it", shown);
    } else if (fstatfs(fd, &sf) != 0 || sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC) {
        rc = ce_fail(ctx, CE_ERR_IO, "%s is a kernel interface (procfs or sysfs), not a spec file: remove it or "
                     "write a version into it (cudaenv local VERSION)", shown);
    } else {
        /* a regular file: stop at its size, no read for the end of file */
        while (n < CE_SPEC_FILE_MAX && (off_t)n < st.st_size) {
            ssize_t r = read(fd, data + n, CE_SPEC_FILE_MAX - n);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0 && errno == EAGAIN) { rc = ce_spec_file_unresolved(ctx, shown); break; }
            if (r < 0) { rc = ce_fail(ctx, CE_ERR_IO, "cannot read %s: %s", shown, strerror(errno)); break; }
            if (r == 0) break;
            n += (size_t)r;
        }
    }
    close(fd);
    data[n] = '\0';
    *len = n;
    return rc;
}

int ce_spec_file_read(ce_ctx *ctx, const char *path, char *spec, size_t specsz)
{
    /* bounded: a .cuda-version comes with any cloned repository, so it may
     * be a FIFO, /proc/kmsg, /proc/self/pagemap or 200 MB without a newline */
    char data[CE_SPEC_FILE_MAX + 1];
    size_t n;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return ce_fail(ctx, errno == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    int rc = spec_fd_head(ctx, fd, path, data, &n);
    return rc ? rc : spec_parse_head(ctx, path, data, n, spec, specsz);
}

int ce_spec_file_write(ce_ctx *ctx, const char *path, const char *spec)
{
    char line[256];
    int n = snprintf(line, sizeof line, "%s\n", spec);
    if (n < 0 || (size_t)n >= sizeof line)
        return ce_fail(ctx, CE_ERR_USAGE, "spec too long: %s", spec);
    return ce_file_write_atomic(ctx, path, line, (size_t)n, 0644);
}

int ce_global_path(ce_ctx *ctx, char *out, size_t outsz)
{
    /* a store that is not ours: our default lives in ~/.config/cudaenv */
    if (ce_store_shared(ctx)) return ce_user_config_path(ctx, "global", out, outsz);
    return ce_store_path(ctx, "global", out, outsz);
}

int ce_version_file_find(ce_ctx *ctx, const char *dir, char *path, size_t pathsz,
                         char *spec, size_t specsz)
{
    char d[4096];
    if (snprintf(d, sizeof d, "%s", dir) >= (int)sizeof d) return 0;
    ce_path_strip_trailing(d);
    for (;;) {
        /* "/" is kept by strip_trailing; join it without a double slash */
        const char *base = strcmp(d, "/") == 0 ? "" : d;
        if (snprintf(path, pathsz, "%s/" CE_VERSION_FILE, base) >= (int)pathsz) return 0;
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            int rc = ce_spec_file_read(ctx, path, spec, specsz);
            return rc ? rc : 1;
        }
        char *slash = strrchr(d, '/');
        if (!slash || !*base) break;
        if (slash == d) slash[1] = '\0'; else *slash = '\0';
    }
    path[0] = '\0';
    return 0;
}

/* The working directory is deeper than PATH_MAX (getcwd fails): walk up
 * with openat(..) from "." until "/", so the pin still applies.  path is
 * $PWD with the levels climbed removed (or ../ repeated) for messages. */
static int version_file_find_deep(ce_ctx *ctx, char *path, size_t pathsz, char *spec, size_t specsz)
{
    struct stat root_st, st;
    if (stat("/", &root_st) != 0) return ce_fail(ctx, CE_ERR_IO, "cannot stat /: %s", strerror(errno));
    int dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return ce_fail(ctx, CE_ERR_IO, "cannot open the working directory: %s", strerror(errno));
    const char *pwd = getenv("PWD");
    for (int up = 0; up < 100000; up++) {
        int fd = openat(dfd, CE_VERSION_FILE, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0) {
            /* the name for messages: $PWD less `up` levels, else ../ repeated */
            char shown[4096] = "";
            char *p = pwd && *pwd == '/' ? strdup(pwd) : NULL;
            for (int k = 0; p && k < up; k++) {
                char *sl = strrchr(p, '/');
                if (sl) *sl = '\0';
            }
            if (p && strlen(p) < sizeof shown) {
                snprintf(shown, sizeof shown, "%s", p);
            } else {
                for (int k = 0; k < up && strlen(shown) + 4 < sizeof shown; k++) strcat(shown, "../");
            }
            free(p);
            int pn = snprintf(path, pathsz, "%s%s" CE_VERSION_FILE, shown,
                              *shown && shown[strlen(shown) - 1] != '/' ? "/" : "");
            if (pn < 0 || (size_t)pn >= pathsz) path[0] = '\0';   /* only shown to the user */
            char data[CE_SPEC_FILE_MAX + 1];
            size_t n;
            close(dfd);
            int rc = spec_fd_head(ctx, fd, path, data, &n);
            if (!rc) rc = spec_parse_head(ctx, path, data, n, spec, specsz);
            return rc ? rc : 1;
        }
        if (fstat(dfd, &st) != 0 || (st.st_dev == root_st.st_dev && st.st_ino == root_st.st_ino)) break;
        int parent = openat(dfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(dfd);
        if (parent < 0) return ce_fail(ctx, CE_ERR_IO, "cannot open a parent of the working directory: %s", strerror(errno));
        dfd = parent;
    }
    close(dfd);
    path[0] = '\0';
    return 0;
}

int ce_select(ce_ctx *ctx, const char *spec, ce_active_info *out)
{
    snprintf(out->spec, sizeof out->spec, "%s", spec);
    if (strcmp(spec, "system") == 0) {
        out->is_system = true;
        return CE_OK;
    }
    out->is_system = false;
    if (ce_store_index_find(ctx, spec, &out->tc)) return CE_OK;   /* tf-X.Y without the manifest */
    return ce_store_find(ctx, spec, &out->tc);
}

/* A spec read from a file that does not resolve: the failure names the
 * file, never what it says (ce_select's messages quote the spec), and out
 * keeps no copy of it for a caller to print. */
static int select_from_file(ce_ctx *ctx, const char *spec, ce_active_info *out)
{
    int rc = ce_select(ctx, spec, out);
    if (rc != CE_ERR_NOTFOUND && rc != CE_ERR_USAGE) return rc;
    memset(out->spec, 0, sizeof out->spec);
    return ce_spec_file_unresolved(ctx, out->source);
}

int ce_active(ce_ctx *ctx, const char *cwd, ce_active_info *out)
{
    memset(out, 0, sizeof *out);
    const char *shell = getenv("CUDAENV_VERSION");
    if (shell && *shell) {
        out->origin = CE_ORIGIN_SHELL;
        return ce_select(ctx, shell, out);
    }
    char here[4096], spec[128];
    bool deep = false;
    if (!cwd) {
        if (!getcwd(here, sizeof here)) {
            /* deeper than PATH_MAX: the pin must not be silently ignored */
            if (errno != ERANGE && errno != ENAMETOOLONG)
                return ce_fail(ctx, CE_ERR_IO, "cannot read the working directory: %s; a .cuda-version above it "
                               "cannot be looked for", strerror(errno));
            deep = true;
            here[0] = '\0';
        }
        cwd = here;
    }
    if (*cwd || deep) {
        int r = deep ? version_file_find_deep(ctx, out->source, sizeof out->source, spec, sizeof spec)
                     : ce_version_file_find(ctx, cwd, out->source, sizeof out->source, spec, sizeof spec);
        if (r < 0) {
            out->origin = CE_ORIGIN_FILE;
            return r;
        }
        if (r == 1) {
            out->origin = CE_ORIGIN_FILE;
            return select_from_file(ctx, spec, out);
        }
    }
    return ce_active_global(ctx, out);
}

int ce_pin_in_effect(ce_ctx *ctx, char *spec, size_t specsz, char *source, size_t sourcesz)
{
    char here[4096], g[4096];
    int rc;
    if (getcwd(here, sizeof here)) {
        if ((rc = ce_version_file_find(ctx, here, source, sourcesz, spec, specsz)) != 0) return rc;
    }
    if ((rc = ce_global_path(ctx, g, sizeof g))) return rc;
    if (!ce_exists(g) && ce_store_shared(ctx) && (rc = ce_store_path(ctx, "global", g, sizeof g))) return rc;
    if (!ce_exists(g)) return 0;
    snprintf(source, sourcesz, "%s", g);
    if ((rc = ce_spec_file_read(ctx, g, spec, specsz))) return rc;
    return 1;
}

int ce_active_global(ce_ctx *ctx, ce_active_info *out)
{
    memset(out, 0, sizeof *out);
    char g[4096], spec[128];
    int rc = ce_global_path(ctx, g, sizeof g);
    if (rc) return rc;
    /* no default of our own beside a shared store: the site default */
    if (!ce_exists(g) && ce_store_shared(ctx) && (rc = ce_store_path(ctx, "global", g, sizeof g))) return rc;
    if (ce_exists(g)) {
        out->origin = CE_ORIGIN_GLOBAL;
        snprintf(out->source, sizeof out->source, "%s", g);
        if ((rc = ce_spec_file_read(ctx, g, spec, sizeof spec))) return rc;
        return select_from_file(ctx, spec, out);
    }
    out->origin = CE_ORIGIN_SYSTEM;
    out->is_system = true;
    snprintf(out->spec, sizeof out->spec, "system");
    return CE_OK;
}

/* ---- environment ---------------------------------------------------- */

bool ce_env_is_ours(const ce_ctx *ctx, const char *path)
{
    size_t rl = strlen(ctx->root);
    return rl && strncmp(path, ctx->root, rl) == 0 && strncmp(path + rl, "/versions/", 10) == 0;
}

/* dir/name exists (access mode).  dir is the caller's buffer of CE_PATH_MAX
 * bytes: the name is appended in place and taken off again (no second 4 KiB
 * buffer on the stack of every env/use). */
static bool has_file(char *dir, const char *name, int mode)
{
    size_t n = strlen(dir), k = strlen(name), sep = n && dir[n - 1] != '/';
    if (n + sep + k >= CE_PATH_MAX) return false;
    if (sep) dir[n] = '/';
    memcpy(dir + n + sep, name, k + 1);
    bool ok = access(dir, mode) == 0;
    dir[n] = '\0';
    return ok;
}

static bool looks_cuda_lib(char *dir)
{
    if (!*dir) return false;
    if (strcasestr(dir, "cuda") || strcasestr(dir, "cudnn")) return true;
    return has_file(dir, "libcudart.so", F_OK) || has_file(dir, "libcudnn.so", F_OK);
}

typedef struct sbuf { char *s; size_t n, cap; bool oom; } sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 256) + n;
        char *ns = realloc(b->s, cap);
        if (!ns) { b->oom = true; return; }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

/* first (may be NULL) + the entries of list that cudaenv did not add;
 * foreign CUDA entries are appended to *foreign ("VAR=entry" joined by ':'). */
static char *rebuild_list(const ce_ctx *ctx, const char *var, const char *first,
                          bool (*is_cuda)(char *), sbuf *foreign, bool *any)
{
    sbuf b = { 0 };
    const char *list = getenv(var);
    *any = false;
    if (first) { sb_add(&b, first, strlen(first)); *any = true; }
    if (list && *list) {
        const char *p = list;
        for (;;) {
            const char *e = strchr(p, ':');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            char ent[CE_PATH_MAX];   /* is_cuda appends to it */
            if (n < sizeof ent) {
                memcpy(ent, p, n);
                ent[n] = '\0';
                if (!ce_env_is_ours(ctx, ent)) {
                    if (*any) sb_add(&b, ":", 1);
                    sb_add(&b, ent, n);
                    *any = true;
                    if (first && foreign && is_cuda(ent)) {
                        if (foreign->n) sb_add(foreign, ":", 1);
                        sb_add(foreign, var, strlen(var));
                        sb_add(foreign, "=", 1);
                        sb_add(foreign, ent, n);
                    }
                }
            }
            if (!e) break;
            p = e + 1;
        }
    }
    if (!b.s) sb_add(&b, "", 0);
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}

static int env_set(ce_ctx *ctx, ce_env *env, const char *name, const char *value)
{
    if (env->n == CE_ENV_MAX) return ce_fail(ctx, CE_ERR_OTHER, "internal: too many variables");
    char *v = NULL;
    if (value && !(v = strdup(value))) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    env->vars[env->n].name = name;
    env->vars[env->n].value = v;
    env->n++;
    return CE_OK;
}

static int env_take(ce_ctx *ctx, ce_env *env, const char *name, char *value, bool set)
{
    if (!value) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    int rc = env_set(ctx, env, name, set ? value : NULL);
    free(value);
    return rc;
}

/* A variable cudaenv set earlier (points into the store): unset it when
 * leaving for "system"; anything else the user set is left alone. */
static int unset_if_ours(ce_ctx *ctx, ce_env *env, const char *name)
{
    const char *v = getenv(name);
    if (v && ce_env_is_ours(ctx, v)) return env_set(ctx, env, name, NULL);
    return CE_OK;
}

/* The value a variable had before cudaenv first set it in this shell, kept
 * in __CUDAENV_OLD_<name> as direnv and mise keep theirs: "=VALUE" when it
 * was set, "" when it was not.  Setting saves it (once: a switch between
 * toolchains keeps the first); leaving restores it and drops the copy. */
#define OLD_PREFIX "__CUDAENV_OLD_"

static const char *old_name(const char *name)
{
    static const char *const names[][2] = {
        { "CUDA_HOME", OLD_PREFIX "CUDA_HOME" },
        { "CUDA_PATH", OLD_PREFIX "CUDA_PATH" },
        { "CUDNN_PATH", OLD_PREFIX "CUDNN_PATH" },
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(names[i][0], name)) return names[i][1];
    return NULL;
}

static int set_saving(ce_ctx *ctx, ce_env *env, const char *name, const char *value)
{
    const char *oname = old_name(name), *cur = getenv(name);
    int rc;
    if (!getenv(oname)) {
        /* ours from an earlier switch is not the user's: nothing to restore */
        bool keep = cur && !ce_env_is_ours(ctx, cur);
        char *saved = malloc((keep ? strlen(cur) : 0) + 2);
        if (!saved) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
        saved[0] = keep ? '=' : '\0';
        if (keep) strcpy(saved + 1, cur);
        if ((rc = env_take(ctx, env, oname, saved, true))) return rc;
    }
    return env_set(ctx, env, name, value);
}

static int restore(ce_ctx *ctx, ce_env *env, const char *name)
{
    const char *oname = old_name(name), *saved = getenv(oname);
    if (!saved) return unset_if_ours(ctx, env, name);
    int rc = env_set(ctx, env, name, saved[0] == '=' ? saved + 1 : NULL);
    return rc ? rc : env_set(ctx, env, oname, NULL);
}

int ce_env_compute(ce_ctx *ctx, const ce_active_info *sel, bool set_version, ce_env *out)
{
    memset(out, 0, sizeof *out);
    const char *prefix = sel->is_system ? NULL : sel->tc.prefix;
    char dir[8500];   /* <prefix>/bin, then <prefix>/lib64[:stubs]: one buffer */
    if (prefix) snprintf(dir, sizeof dir, "%s/bin", prefix);
    sbuf foreign = { 0 };
    bool any;
    int rc;
    /* PATH's other entries are never reported: <prefix>/bin comes first, and
     * a directory such as /usr/local/bin holds much besides an nvcc */
    char *path = rebuild_list(ctx, "PATH", prefix ? dir : NULL, NULL, NULL, &any);
    if ((rc = env_take(ctx, out, "PATH", path, true))) goto fail;
    if (prefix) snprintf(dir, sizeof dir, "%s/lib64", prefix);
    char *ld = rebuild_list(ctx, "LD_LIBRARY_PATH", prefix ? dir : NULL, looks_cuda_lib, &foreign, &any);
    if ((rc = env_take(ctx, out, "LD_LIBRARY_PATH", ld, any))) goto fail;
    /* the linker's path (gcc -lcudart, -lcuda from the driver's stubs) */
    if (prefix) snprintf(dir, sizeof dir, "%s/lib64:%s/lib64/stubs", prefix, prefix);
    char *lib = rebuild_list(ctx, "LIBRARY_PATH", prefix ? dir : NULL, NULL, NULL, &any);
    if ((rc = env_take(ctx, out, "LIBRARY_PATH", lib, any))) goto fail;
    if (prefix) {
        if ((rc = set_saving(ctx, out, "CUDA_HOME", prefix)) ||
            (rc = set_saving(ctx, out, "CUDA_PATH", prefix)))
            goto fail;
        if (sel->tc.cudnn[0]) rc = set_saving(ctx, out, "CUDNN_PATH", prefix);
        else rc = restore(ctx, out, "CUDNN_PATH");
        if (rc) goto fail;
    } else if ((rc = restore(ctx, out, "CUDA_HOME")) || (rc = restore(ctx, out, "CUDA_PATH")) ||
               (rc = restore(ctx, out, "CUDNN_PATH"))) {
        goto fail;
    }
    if (set_version) rc = env_set(ctx, out, "CUDAENV_VERSION", prefix ? sel->tc.name : "system");
    else rc = getenv("CUDAENV_VERSION") ? env_set(ctx, out, "CUDAENV_VERSION", NULL) : CE_OK;
    if (rc) goto fail;
    if (foreign.oom) { rc = ce_fail(ctx, CE_ERR_NOMEM, "out of memory"); goto fail; }
    if (foreign.n) snprintf(out->foreign, sizeof out->foreign, "%s", foreign.s);
    free(foreign.s);
    return CE_OK;
fail:
    free(foreign.s);
    ce_env_free(out);
    return rc;
}

int ce_env_warn_foreign(ce_ctx *ctx, ce_env *env, const char *name)
{
    const char *warned = getenv("CUDAENV_WARNED");
    if (!env->foreign[0] || (warned && !strcmp(warned, env->foreign))) return CE_OK;
    char list[sizeof env->foreign];
    snprintf(list, sizeof list, "%s", env->foreign);
    char *save = NULL;
    for (char *tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
        ce_emit(ctx, CE_EV_WARN, NULL,
                "LD_LIBRARY_PATH also has %s (another CUDA's libraries, after %s's): a library %s lacks "
                "may be loaded from there (cudaenv doctor checks what loads)", strchr(tok, '=') + 1, name, name);
    return env_set(ctx, env, "CUDAENV_WARNED", env->foreign);
}

void ce_env_free(ce_env *env)
{
    for (size_t i = 0; i < env->n; i++) free(env->vars[i].value);
    env->n = 0;
}

int ce_env_apply(ce_ctx *ctx, const ce_env *env)
{
    for (size_t i = 0; i < env->n; i++) {
        const ce_env_var *v = &env->vars[i];
        int r = v->value ? setenv(v->name, v->value, 1) : unsetenv(v->name);
        if (r != 0) return ce_fail(ctx, CE_ERR_OTHER, "cannot set %s: %s", v->name, strerror(errno));
    }
    return CE_OK;
}

/* ---- rendering ------------------------------------------------------ */

int ce_shell_parse(const char *name)
{
    if (!strcmp(name, "bash") || !strcmp(name, "zsh") || !strcmp(name, "sh")) return CE_SH_POSIX;
    if (!strcmp(name, "fish")) return CE_SH_FISH;
    if (!strcmp(name, "json")) return CE_SH_JSON;
    return -1;
}

/* '...' with ' written as '\'' (POSIX) or \' (fish, which also escapes \). */
static void sb_quote(sbuf *b, const char *s, size_t n, bool fish)
{
    sb_add(b, "'", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'') sb_add(b, fish ? "\\'" : "'\\''", fish ? 2 : 4);
        else if (fish && s[i] == '\\') sb_add(b, "\\\\", 2);
        else sb_add(b, s + i, 1);
    }
    sb_add(b, "'", 1);
}

static void sb_json_str(sbuf *b, const char *s)
{
    sb_add(b, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '"' || ch == '\\') { esc[0] = '\\'; esc[1] = (char)ch; sb_add(b, esc, 2); }
        else if (ch < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", ch); sb_add(b, esc, 6); }
        else sb_add(b, s, 1);
    }
    sb_add(b, "\"", 1);
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

static void format_json(sbuf *b, const ce_env *env, const ce_active_info *sel)
{
    sb_str(b, "{\"name\":");
    sb_json_str(b, sel->is_system ? "system" : sel->tc.name);
    sb_str(b, ",\"prefix\":");
    if (sel->is_system) sb_str(b, "null"); else sb_json_str(b, sel->tc.prefix);
    sb_str(b, ",\"env\":{");
    bool first = true;
    for (size_t i = 0; i < env->n; i++) {
        if (!env->vars[i].value) continue;
        if (!first) sb_str(b, ",");
        first = false;
        sb_json_str(b, env->vars[i].name);
        sb_str(b, ":");
        sb_json_str(b, env->vars[i].value);
    }
    sb_str(b, "},\"unset\":[");
    first = true;
    for (size_t i = 0; i < env->n; i++) {
        if (env->vars[i].value) continue;
        if (!first) sb_str(b, ",");
        first = false;
        sb_json_str(b, env->vars[i].name);
    }
    sb_str(b, "]}\n");
}

int ce_env_format(ce_ctx *ctx, const ce_env *env, const ce_active_info *sel, ce_shell sh, char **out)
{
    sbuf b = { 0 };
    if (sh == CE_SH_JSON) {
        format_json(&b, env, sel);
    } else {
        for (size_t i = 0; i < env->n; i++) {
            const ce_env_var *v = &env->vars[i];
            bool fish = sh == CE_SH_FISH;
            if (!v->value) {
                sb_str(&b, fish ? "set -e " : "unset ");
                sb_str(&b, v->name);
                sb_str(&b, ";\n");
                continue;
            }
            sb_str(&b, fish ? "set -gx " : "export ");
            sb_str(&b, v->name);
            sb_str(&b, fish ? " " : "=");
            bool list = fish && (!strcmp(v->name, "PATH") || !strcmp(v->name, "LD_LIBRARY_PATH") ||
                                 !strcmp(v->name, "LIBRARY_PATH"));
            if (list) {
                /* fish keeps PATH as a list: one argument per entry */
                const char *p = v->value;
                for (;;) {
                    const char *e = strchr(p, ':');
                    size_t n = e ? (size_t)(e - p) : strlen(p);
                    sb_quote(&b, p, n, true);
                    if (!e) break;
                    sb_str(&b, " ");
                    p = e + 1;
                }
            } else {
                sb_quote(&b, v->value, strlen(v->value), fish);
            }
            sb_str(&b, ";\n");
        }
    }
    if (!b.s) sb_add(&b, "", 0);
    if (b.oom) {
        free(b.s);
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    }
    *out = b.s;
    return CE_OK;
}
