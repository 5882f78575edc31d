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

int ce_spec_file_unresolved(const char *shown)
{
    /* never echoed: the file may be a symlink to a token (~/.vault-token,
     * ~/.git-credentials) or carry terminal escapes; one message and one
     * exit code whatever the content, so neither says what it is */
    return ce_fail(CE_ERR_NOTFOUND, "%s: no such toolchain or spec (content not shown); see what it names "
                   "with: cat %s, then install that (cudaenv install VERSION) or pin an installed one (cudaenv list)",
                   shown, shown);
}

int ce_spec_file_showable(const char *shown, const char *spec)
{
    ce_spec parsed;
    if (!strcmp(spec, "system") || ce_spec_parse(spec, &parsed) == CE_OK) return CE_OK;
    return ce_spec_file_unresolved(shown);
}

/* The spec in the first CE_SPEC_FILE_MAX bytes of a spec file (n of them
 * in data, NUL-terminated); shown names the file in messages. */
static int spec_parse_head(const char *shown, char *data, size_t n, char *spec, size_t specsz)
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
        return ce_fail(CE_ERR_USAGE, "%s names no toolchain (expected one line such as 11.8 or tf-2.14)", shown);
    if (cut || strlen(found) >= specsz || !spec_chars(found)) return ce_spec_file_unresolved(shown);
    snprintf(spec, specsz, "%s", found);
    return CE_OK;
}

/* The head of a spec file open at fd (with O_NONBLOCK, which stays set: a
 * read that would block is "not a spec", never a hung prompt): a regular
 * file (FIFOs and devices have no size to trust) and not on procfs or sysfs,
 * whose files are made up on reading, may block (/proc/kmsg) or consume what
 * they return; at most CE_SPEC_FILE_MAX bytes.  fd is closed. */
static int spec_fd_head(int fd, const char *shown, char *data, size_t *len)
{
    struct stat st;
    struct statfs sf;
    int rc = CE_OK;
    size_t n = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = ce_fail(CE_ERR_IO, "%s is not a regular file (a FIFO, device or directory); cudaenv reads a "
                     "spec only from a regular file: remove or replace it", shown);
    } else if (fstatfs(fd, &sf) != 0 || sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC) {
        rc = ce_fail(CE_ERR_IO, "%s is a kernel interface (procfs or sysfs), not a spec file: remove it or "
                     "write a version into it (cudaenv local VERSION)", shown);
    } else {
        /* a regular file: stop at its size, no read for the end of file */
        while (n < CE_SPEC_FILE_MAX && (off_t)n < st.st_size) {
            ssize_t r = read(fd, data + n, CE_SPEC_FILE_MAX - n);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0 && errno == EAGAIN) { rc = ce_spec_file_unresolved(shown); break; }
            if (r < 0) { rc = ce_fail(CE_ERR_IO, "cannot read %s: %s", shown, strerror(errno)); break; }
            if (r == 0) break;
            n += (size_t)r;
        }
    }
    close(fd);
    data[n] = '\0';
    *len = n;
    return rc;
}

/* The line "libs=framework" of a spec file's head (activate.h: ce_libs),
 * read before spec_parse_head cuts the data into lines. */
static ce_libs libs_line(const char *data)
{
    for (const char *line = data; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t k = nl ? (size_t)(nl - line) : strlen(line);
        while (k && isspace((unsigned char)line[k - 1])) k--;
        if (k == strlen("libs=framework") && !strncmp(line, "libs=framework", k)) return CE_LIBS_FRAMEWORK;
        line = nl ? nl + 1 : NULL;
    }
    return CE_LIBS_TOOLCHAIN;
}

static int spec_file_read(const char *path, char *spec, size_t specsz, ce_libs *libs)
{
    /* bounded: a .cuda-version comes with any cloned repository, so it may
     * be a FIFO, /proc/kmsg, /proc/self/pagemap or 200 MB without a newline */
    char data[CE_SPEC_FILE_MAX + 1];
    size_t n;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return ce_fail(errno == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    int rc = spec_fd_head(fd, path, data, &n);
    if (!rc && libs) *libs = libs_line(data);
    return rc ? rc : spec_parse_head(path, data, n, spec, specsz);
}

int ce_spec_file_read(const char *path, char *spec, size_t specsz)
{
    return spec_file_read(path, spec, specsz, NULL);
}

int ce_spec_file_write(const char *path, const char *spec)
{
    char line[256];
    int n = snprintf(line, sizeof line, "%s\n", spec);
    if (n < 0 || (size_t)n >= sizeof line)
        return ce_fail(CE_ERR_USAGE, "spec too long: %s", spec);
    return ce_file_write_atomic(path, line, (size_t)n, 0644);
}

int ce_pin_write(const char *path, const char *spec, ce_libs libs)
{
    if (libs == CE_LIBS_TOOLCHAIN) return ce_spec_file_write(path, spec);
    char text[300];
    int n = snprintf(text, sizeof text, "%s\nlibs=framework\n", spec);
    if (n < 0 || (size_t)n >= sizeof text) return ce_fail(CE_ERR_USAGE, "spec too long: %s", spec);
    return ce_file_write_atomic(path, text, (size_t)n, 0644);
}

int ce_global_path(ce_ctx *ctx, char *out, size_t outsz)
{
    /* a store that is not ours: our default lives in ~/.config/cudaenv */
    if (ce_store_shared(ctx)) return ce_user_config_path("global", out, outsz);
    return ce_store_path(ctx, "global", out, outsz);
}

static int version_file_find(const char *dir, char *path, size_t pathsz, char *spec, size_t specsz,
                             ce_libs *libs)
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
            int rc = spec_file_read(path, spec, specsz, libs);
            return rc ? rc : 1;
        }
        char *slash = strrchr(d, '/');
        if (!slash || !*base) break;
        if (slash == d) slash[1] = '\0'; else *slash = '\0';
    }
    path[0] = '\0';
    return 0;
}

int ce_version_file_find(const char *dir, char *path, size_t pathsz,
                         char *spec, size_t specsz)
{
    return version_file_find(dir, path, pathsz, spec, specsz, NULL);
}

/* The working directory is deeper than PATH_MAX (getcwd fails): walk up
 * with openat(..) from "." until "/", so the pin still applies.  path is
 * $PWD with the levels climbed removed (or ../ repeated) for messages. */
static int version_file_find_deep(char *path, size_t pathsz, char *spec, size_t specsz, ce_libs *libs)
{
    struct stat root_st, st;
    if (stat("/", &root_st) != 0) return ce_fail(CE_ERR_IO, "cannot stat /: %s", strerror(errno));
    int dfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return ce_fail(CE_ERR_IO, "cannot open the working directory: %s", strerror(errno));
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
            int rc = spec_fd_head(fd, path, data, &n);
            if (!rc) *libs = libs_line(data);
            if (!rc) rc = spec_parse_head(path, data, n, spec, specsz);
            return rc ? rc : 1;
        }
        if (fstat(dfd, &st) != 0 || (st.st_dev == root_st.st_dev && st.st_ino == root_st.st_ino)) break;
        int parent = openat(dfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        close(dfd);
        if (parent < 0) return ce_fail(CE_ERR_IO, "cannot open a parent of the working directory: %s", strerror(errno));
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
    return ce_spec_file_unresolved(out->source);
}

int ce_active(ce_ctx *ctx, const char *cwd, ce_active_info *out)
{
    memset(out, 0, sizeof *out);
    const char *shell = getenv("CUDAENV_VERSION");
    if (shell && *shell) {
        out->origin = CE_ORIGIN_SHELL;
        const char *libs = getenv(CE_LIBS_VAR);
        int rc = ce_select(ctx, shell, out);
        out->libs = libs && !strcmp(libs, "framework") ? CE_LIBS_FRAMEWORK : CE_LIBS_TOOLCHAIN;
        return rc;
    }
    char here[4096], spec[128];
    bool deep = false;
    if (!cwd) {
        if (!getcwd(here, sizeof here)) {
            /* deeper than PATH_MAX: the pin must not be silently ignored */
            if (errno != ERANGE && errno != ENAMETOOLONG)
                return ce_fail(CE_ERR_IO, "cannot read the working directory: %s; a .cuda-version above it "
                               "cannot be looked for", strerror(errno));
            deep = true;
            here[0] = '\0';
        }
        cwd = here;
    }
    if (*cwd || deep) {
        ce_libs libs = CE_LIBS_TOOLCHAIN;
        int r = deep ? version_file_find_deep(out->source, sizeof out->source, spec, sizeof spec, &libs)
                     : version_file_find(cwd, out->source, sizeof out->source, spec, sizeof spec, &libs);
        if (r < 0) {
            out->origin = CE_ORIGIN_FILE;
            return r;
        }
        if (r == 1) {
            out->origin = CE_ORIGIN_FILE;
            int rc = select_from_file(ctx, spec, out);
            out->libs = libs;
            return rc;
        }
    }
    return ce_active_global(ctx, out);
}

int ce_pin_in_effect(ce_ctx *ctx, char *spec, size_t specsz, char *source, size_t sourcesz)
{
    char here[4096], g[4096];
    int rc;
    if (getcwd(here, sizeof here)) {
        if ((rc = ce_version_file_find(here, source, sourcesz, spec, specsz)) != 0) return rc;
    }
    if ((rc = ce_global_path(ctx, g, sizeof g))) return rc;
    if (!ce_exists(g) && ce_store_shared(ctx) && (rc = ce_store_path(ctx, "global", g, sizeof g))) return rc;
    if (!ce_exists(g)) return 0;
    snprintf(source, sourcesz, "%s", g);
    if ((rc = ce_spec_file_read(g, spec, specsz))) return rc;
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
        if ((rc = ce_spec_file_read(g, spec, sizeof spec))) return rc;
        return select_from_file(ctx, spec, out);
    }
    out->origin = CE_ORIGIN_SYSTEM;
    out->is_system = true;
    snprintf(out->spec, sizeof out->spec, "system");
    return CE_OK;
}
