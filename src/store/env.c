/* The environment that activates a toolchain (activate.h: ce_env_*,
 * ce_shell_*): PATH-like lists rebuilt without cudaenv's entries, the
 * CUDA_* variables saved and given back, and the result applied to this
 * process or rendered for a shell.  Which toolchain is active is
 * activate.c. */
#include "activate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/path.h"

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

static int env_set(ce_env *env, const char *name, const char *value)
{
    if (env->n == CE_ENV_MAX) return ce_fail(CE_ERR_OTHER, "internal: too many variables");
    char *v = NULL;
    if (value && !(v = strdup(value))) return ce_fail(CE_ERR_NOMEM, "out of memory");
    env->vars[env->n].name = name;
    env->vars[env->n].value = v;
    env->n++;
    return CE_OK;
}

static int env_take(ce_env *env, const char *name, char *value, bool set)
{
    if (!value) return ce_fail(CE_ERR_NOMEM, "out of memory");
    int rc = env_set(env, name, set ? value : NULL);
    free(value);
    return rc;
}

/* A variable cudaenv set earlier (points into the store): unset it when
 * leaving for "system"; anything else the user set is left alone. */
static int unset_if_ours(ce_ctx *ctx, ce_env *env, const char *name)
{
    const char *v = getenv(name);
    if (v && ce_env_is_ours(ctx, v)) return env_set(env, name, NULL);
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
        if (!saved) return ce_fail(CE_ERR_NOMEM, "out of memory");
        saved[0] = keep ? '=' : '\0';
        if (keep) strcpy(saved + 1, cur);
        if ((rc = env_take(env, oname, saved, true))) return rc;
    }
    return env_set(env, name, value);
}

static int restore(ce_ctx *ctx, ce_env *env, const char *name)
{
    const char *oname = old_name(name), *saved = getenv(oname);
    if (!saved) return unset_if_ours(ctx, env, name);
    int rc = env_set(env, name, saved[0] == '=' ? saved + 1 : NULL);
    return rc ? rc : env_set(env, oname, NULL);
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
    if ((rc = env_take(out, "PATH", path, true))) goto fail;
    /* the framework's own libraries (activate.h: ce_libs): the toolchain's
     * lib64 stays off the loader path, any earlier toolchain's is taken off */
    bool own = prefix && sel->libs == CE_LIBS_FRAMEWORK;
    if (prefix) snprintf(dir, sizeof dir, "%s/lib64", prefix);
    char *ld = rebuild_list(ctx, "LD_LIBRARY_PATH", prefix && !own ? dir : NULL, looks_cuda_lib, &foreign, &any);
    if ((rc = env_take(out, "LD_LIBRARY_PATH", ld, any))) goto fail;
    /* the linker's path (gcc -lcudart, -lcuda from the driver's stubs) */
    if (prefix) snprintf(dir, sizeof dir, "%s/lib64:%s/lib64/stubs", prefix, prefix);
    char *lib = rebuild_list(ctx, "LIBRARY_PATH", prefix ? dir : NULL, NULL, NULL, &any);
    if ((rc = env_take(out, "LIBRARY_PATH", lib, any))) goto fail;
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
    if (set_version) rc = env_set(out, "CUDAENV_VERSION", prefix ? sel->tc.name : "system");
    else rc = getenv("CUDAENV_VERSION") ? env_set(out, "CUDAENV_VERSION", NULL) : CE_OK;
    if (rc) goto fail;
    /* a shell selection keeps its mode for the hook's next env */
    if (own && set_version) rc = env_set(out, CE_LIBS_VAR, "framework");
    else if (getenv(CE_LIBS_VAR)) rc = env_set(out, CE_LIBS_VAR, NULL);
    if (rc) goto fail;
    if (foreign.oom) { rc = ce_fail(CE_ERR_NOMEM, "out of memory"); goto fail; }
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
    return env_set(env, "CUDAENV_WARNED", env->foreign);
}

void ce_env_free(ce_env *env)
{
    for (size_t i = 0; i < env->n; i++) free(env->vars[i].value);
    env->n = 0;
}

int ce_env_apply(const ce_env *env)
{
    for (size_t i = 0; i < env->n; i++) {
        const ce_env_var *v = &env->vars[i];
        int r = v->value ? setenv(v->name, v->value, 1) : unsetenv(v->name);
        if (r != 0) return ce_fail(CE_ERR_OTHER, "cannot set %s: %s", v->name, strerror(errno));
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

int ce_env_format(const ce_env *env, const ce_active_info *sel, ce_shell sh, char **out)
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
        return ce_fail(CE_ERR_NOMEM, "out of memory");
    }
    *out = b.s;
    return CE_OK;
}
