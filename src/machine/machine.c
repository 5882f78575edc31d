#include "machine.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fault.h"
#include "core/path.h"

void ce_machine_init(ce_machine *m, const ce_ctx *ctx)
{
    memset(m, 0, sizeof *m);
    snprintf(m->root, sizeof m->root, "%s", ctx->sysroot);
    const char *lib = NULL;
    ce_fault_point("machine-libdir", &lib);   /* tests: where the driver doubles are (core/fault.h) */
    if (lib && *lib) snprintf(m->libdir, sizeof m->libdir, "%s", lib);
}

void ce_machine_path(const ce_machine *m, const char *abs, char *out, size_t outsz)
{
    ce_path_under(m->root, abs, out, outsz);
}

ssize_t ce_machine_read(const ce_machine *m, const char *abs, char *buf, size_t bufsz)
{
    char p[8192];
    ce_machine_path(m, abs, p, sizeof p);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) { if (bufsz) buf[0] = '\0'; return -1; }
    size_t got = 0;
    while (got + 1 < bufsz) {
        ssize_t r = read(fd, buf + got, bufsz - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

bool ce_machine_exists(const ce_machine *m, const char *abs)
{
    char p[8192];
    struct stat st;
    ce_machine_path(m, abs, p, sizeof p);
    return lstat(p, &st) == 0;
}

bool ce_machine_is_dir(const ce_machine *m, const char *abs)
{
    char p[8192];
    struct stat st;
    ce_machine_path(m, abs, p, sizeof p);
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

bool ce_machine_devnode(const ce_machine *m, const char *abs)
{
    char p[8192];
    struct stat st;
    ce_machine_path(m, abs, p, sizeof p);
    if (stat(p, &st) != 0) return false;
    return m->root[0] ? true : S_ISCHR(st.st_mode);
}

int ce_machine_readlink(const ce_machine *m, const char *abs, char *out, size_t outsz)
{
    char p[8192];
    struct stat st;
    ce_machine_path(m, abs, p, sizeof p);
    if (lstat(p, &st) != 0) return -1;
    if (!S_ISLNK(st.st_mode)) { if (outsz) out[0] = '\0'; return 0; }
    ssize_t n = readlink(p, out, outsz - 1);
    if (n < 0) return -1;
    out[n] = '\0';
    return 1;
}

DIR *ce_machine_opendir(const ce_machine *m, const char *abs)
{
    char p[8192];
    ce_machine_path(m, abs, p, sizeof p);
    return opendir(p);
}

/* Walk the path one component at a time, as the kernel would inside a
 * chroot at m->root: realpath(3) on the host path would follow an absolute
 * link (/usr/local/cuda -> /usr/local/cuda-12.4) out of the fake tree. */
int ce_machine_resolve(const ce_machine *m, const char *abs, char *out, size_t outsz)
{
    char done[4096] = "";      /* resolved system path so far ("" = /) */
    char todo[8192];
    snprintf(todo, sizeof todo, "%s", abs);
    int hops = 0;
    char *rest = todo;
    while (*rest) {
        while (*rest == '/') rest++;
        if (!*rest) break;
        char comp[1024];
        size_t n = strcspn(rest, "/");
        if (n >= sizeof comp) return -1;
        memcpy(comp, rest, n);
        comp[n] = '\0';
        rest += n;
        if (!strcmp(comp, ".")) continue;
        if (!strcmp(comp, "..")) {
            char *s = strrchr(done, '/');
            if (s) *s = '\0';
            continue;
        }
        char cand[4096];
        if ((size_t)snprintf(cand, sizeof cand, "%s/%s", done, comp) >= sizeof cand) return -1;
        char target[4096];
        int l = ce_machine_readlink(m, cand, target, sizeof target);
        if (l < 0) {
            snprintf(out, outsz, "%s%s", cand, rest);
            return -1;
        }
        if (l == 0) { snprintf(done, sizeof done, "%s", cand); continue; }
        if (++hops > 40) return -1;
        char next[8192];
        if (target[0] == '/') snprintf(next, sizeof next, "%s%s", target, rest);
        else snprintf(next, sizeof next, "%s/%s%s", done, target, rest);
        done[0] = '\0';    /* next is a whole path from the root again */
        snprintf(todo, sizeof todo, "%s", next);
        rest = todo;
    }
    snprintf(out, outsz, "%s", done[0] ? done : "/");
    return 0;
}

void *ce_machine_dlopen(const ce_machine *m, const char *soname, char *where, size_t wsz)
{
    char p[CE_PATH_MAX];
    if (ce_path_join(p, sizeof p, m->libdir, soname) != CE_OK) {
        snprintf(where, wsz, "the path of %s under %s is too long", soname, m->libdir);
        return NULL;
    }
    void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(where, wsz, "%s", e ? e : "cannot load");
        return NULL;
    }
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
        snprintf(where, wsz, "%s", lm->l_name);
    else
        snprintf(where, wsz, "%s", p);
    return h;
}

bool ce_same_file(const char *a, const char *b)
{
    struct stat x, y;
    if (stat(a, &x) != 0 || stat(b, &y) != 0) return false;
    return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

bool ce_elf_usable(const char *hostpath)
{
    unsigned char h[EI_NIDENT];
    int fd = open(hostpath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t r = read(fd, h, sizeof h);
    close(fd);
    if (r != (ssize_t)sizeof h || memcmp(h, ELFMAG, SELFMAG) != 0) return false;
    return h[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32);
}
