/* Step 3: the libraries really came from the toolchain.  The runtime, NVRTC
 * and cuDNN were dlopen()ed by explicit path; here the link map says which
 * files the process holds (a library's own dependencies, such as cuDNN 8's
 * sub-libraries without RPATH, are found by SONAME and can come from
 * anywhere), and LD_LIBRARY_PATH is searched the way the dynamic loader
 * does for a copy that would shadow the toolchain's in other programs. */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "st_int.h"

static bool pread_all(int fd, void *buf, size_t n, off_t off)
{
    return pread(fd, buf, n, off) == (ssize_t)n;
}

/* DT_SONAME of a 64-bit ELF shared object, read from the file: the name
 * other objects and plain dlopen() calls know it by.  -1 for anything that
 * is not a complete ELF object (a truncated copy, a text file). */
int st_elf_soname(const char *path, char *out, size_t outsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = -1;
    Elf64_Ehdr eh;
    Elf64_Phdr *ph = NULL;
    Elf64_Dyn *dyn = NULL;
    if (!pread_all(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
        eh.e_phnum > 256)
        goto out;
    ph = calloc(eh.e_phnum, sizeof *ph);
    if (!ph || !pread_all(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff)) goto out;
    const Elf64_Phdr *dp = NULL;
    for (int i = 0; i < eh.e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC) dp = &ph[i];
    if (!dp || dp->p_filesz > (1u << 20)) goto out;
    size_t nd = dp->p_filesz / sizeof(Elf64_Dyn);
    dyn = calloc(nd ? nd : 1, sizeof *dyn);
    if (!dyn || !pread_all(fd, dyn, nd * sizeof *dyn, (off_t)dp->p_offset)) goto out;
    Elf64_Addr strtab = 0;
    Elf64_Xword soname = (Elf64_Xword)-1;
    for (size_t i = 0; i < nd && dyn[i].d_tag != DT_NULL; i++) {
        if (dyn[i].d_tag == DT_STRTAB) strtab = dyn[i].d_un.d_ptr;
        if (dyn[i].d_tag == DT_SONAME) soname = dyn[i].d_un.d_val;
    }
    if (!strtab || soname == (Elf64_Xword)-1) goto out;
    for (int i = 0; i < eh.e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD || strtab < ph[i].p_vaddr || strtab >= ph[i].p_vaddr + ph[i].p_filesz)
            continue;
        off_t off = (off_t)(strtab - ph[i].p_vaddr + ph[i].p_offset + soname);
        char buf[256];
        ssize_t n = pread(fd, buf, sizeof buf - 1, off);
        if (n <= 0) goto out;
        buf[n] = '\0';
        if (strlen(buf) == (size_t)n) goto out;  /* no terminator: truncated */
        snprintf(out, outsz, "%s", buf);
        rc = 0;
        break;
    }
out:
    free(ph);
    free(dyn);
    close(fd);
    return rc;
}

/* A shared object whose segments reach past the end of the file (a
 * truncated copy) makes dlopen() die of SIGBUS while relocating; refuse it
 * first, with the sizes. */
int st_elf_complete(const char *path, char *why, size_t wsz)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, wsz, "cannot open %s: %m", path);
        return -1;
    }
    struct stat sb;
    Elf64_Ehdr eh;
    int rc = -1;
    Elf64_Phdr *ph = NULL;
    if (fstat(fd, &sb) != 0 || !pread_all(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256) {
        snprintf(why, wsz, "%s is not a complete 64-bit ELF shared object", path);
        goto out;
    }
    unsigned long long need = eh.e_phoff + (unsigned long long)eh.e_phnum * sizeof(Elf64_Phdr);
    if (eh.e_shoff) {
        unsigned long long sh = eh.e_shoff + (unsigned long long)eh.e_shnum * eh.e_shentsize;
        if (sh > need) need = sh;
    }
    ph = calloc(eh.e_phnum ? eh.e_phnum : 1, sizeof *ph);
    if (ph && pread_all(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff)) {
        for (int i = 0; i < eh.e_phnum; i++)
            if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > need)
                need = ph[i].p_offset + ph[i].p_filesz;
    } else {
        need = (unsigned long long)sb.st_size + 1;
    }
    if ((unsigned long long)sb.st_size < need) {
        snprintf(why, wsz, "%s is %lld bytes but its ELF headers need %llu: the file is truncated", path,
                 (long long)sb.st_size, need);
        goto out;
    }
    rc = 0;
out:
    free(ph);
    close(fd);
    return rc;
}

int st_elf_dir_complete(const char *dir, const char *stem, char *why, size_t wsz)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int rc = 0;
    size_t sl = strlen(stem);
    while (rc == 0 && (e = readdir(d))) {
        if (strncmp(e->d_name, stem, sl) != 0 || !strstr(e->d_name, ".so")) continue;
        char p[CE_PATH_MAX];
        struct stat sb;
        if (ce_path_join(p, sizeof p, dir, e->d_name) != CE_OK || lstat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        rc = st_elf_complete(p, why, wsz);
    }
    closedir(d);
    return rc;
}

static bool inside(const char *real, const char *root_real)
{
    size_t n = strlen(root_real);
    return n && strncmp(real, root_real, n) == 0 && (real[n] == '/' || real[n] == '\0');
}

/* One file, whatever the names: an adopted toolchain's prefix is links into
 * the tree it adopted, so its paths and the loader's differ as strings. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Libraries that must come from the toolchain when it has them. */
static bool cuda_family(const char *base)
{
    static const char *fam[] = { "libcudart.", "libnvrtc", "libcudnn", "libcublas", "libnvJitLink.",
                                 "libcufft.", "libcurand.", "libcusparse.", "libcusolver." };
    for (size_t i = 0; i < sizeof fam / sizeof *fam; i++)
        if (strncmp(base, fam[i], strlen(fam[i])) == 0) return true;
    return false;
}

typedef struct scan_ctx {
    st_state *st;
    st_step *s;
    char prefix_real[CE_PATH_MAX];
    char libdir_real[CE_PATH_MAX], cudnn_real[4096];  /* resolved: an adopted lib64 is a link */
    int problems, ours;
    bool quiet_ok;   /* late pass: list problems only */
} scan_ctx;

/* Each toolchain library mapped, once (report.mapped: both passes add). */
static void record_mapped(st_report *r, const char *real)
{
    size_t len = strlen(real), used = strlen(r->mapped);
    for (const char *p = r->mapped; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n == len && !strncmp(p, real, n)) return;
        p += n + (nl != NULL);
    }
    if (used + len + 2 <= sizeof r->mapped) snprintf(r->mapped + used, sizeof r->mapped - used, "%s\n", real);
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *ud)
{
    (void)size;
    scan_ctx *sc = ud;
    const char *name = info->dlpi_name;
    if (!name || !name[0]) return 0;
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (!cuda_family(base)) return 0;
    char real[4096], mine[CE_PATH_MAX];
    if (!realpath(name, real)) snprintf(real, sizeof real, "%s", name);
    if (inside(real, sc->prefix_real) || inside(real, sc->libdir_real) || inside(real, sc->cudnn_real) ||
        (ce_path_join(mine, sizeof mine, sc->st->libdir, base) == CE_OK && same_file(real, mine))) {
        sc->ours++;
        record_mapped(sc->st->r, real);
        if (!sc->quiet_ok) st_note(sc->s, "loaded %s -> %s", base, real);
        return 0;
    }
    sc->problems++;
    char tc_copy[CE_PATH_MAX];
    if (ce_path_join(tc_copy, sizeof tc_copy, sc->st->libdir, base) == CE_OK && ce_exists(tc_copy))
        st_failf(sc->s, "%s was loaded from %s instead of the toolchain's %s", base, real, tc_copy);
    else
        st_failf(sc->s, "%s was loaded from %s, outside the toolchain %s (a dependency the toolchain lacks)",
                 base, real, sc->st->r->tc.prefix);
    return 0;
}

/* The toolchain's library directories, resolved ("" where absent). */
static void scan_roots(scan_ctx *sc)
{
    if (!realpath(sc->st->libdir, sc->libdir_real)) sc->libdir_real[0] = '\0';
    if (!sc->st->cudnn_libdir[0] || !realpath(sc->st->cudnn_libdir, sc->cudnn_real)) sc->cudnn_real[0] = '\0';
}

static void check_handle(st_step *s, void *h, const char *what, const char *want)
{
    if (!h) return;
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm) {
        st_failf(s, "dlinfo(%s) failed: %s", what, dlerror());
        return;
    }
    char real[4096], want_real[4096];
    if (!realpath(lm->l_name, real)) snprintf(real, sizeof real, "%s", lm->l_name);
    if (!realpath(want, want_real)) snprintf(want_real, sizeof want_real, "%s", want);
    if (!same_file(lm->l_name, want))
        st_failf(s, "%s: asked for %s, the loader mapped %s", what, want_real, real);
}

/* The directories of lp (LD_LIBRARY_PATH) in order; empty entries mean
 * ".".  A copy of soname found before the toolchain's own directory shadows
 * it: a failure in the environment the check runs in, a warning (shell) in
 * the shell's, which only programs run without cudaenv see. */
static int search_ld_path(st_state *st, st_step *s, const char *lp, bool shell, const char *soname,
                          const char *ours_path)
{
    if (!lp || !*lp || !soname[0]) return 0;
    char ours[4096], libdir_real[4096];
    if (!realpath(ours_path, ours)) return 0;
    if (!realpath(st->libdir, libdir_real)) snprintf(libdir_real, sizeof libdir_real, "%s", st->libdir);
    char *dup = strdup(lp);
    if (!dup) return 0;
    int found = 0;
    char *save = NULL;
    for (char *d = strtok_r(dup, ":;", &save); d; d = strtok_r(NULL, ":;", &save)) {
        char dreal[4096], cand[CE_PATH_MAX], creal[4096];
        if (realpath(d, dreal) && strcmp(dreal, libdir_real) == 0) break;  /* ours comes first */
        if (ce_path_join(cand, sizeof cand, d, soname) != CE_OK || !realpath(cand, creal) || same_file(creal, ours)) continue;
        if (shell) {
            size_t used = strlen(st->r->warnings);
            snprintf(st->r->warnings + used, sizeof st->r->warnings - used,
                     "this shell's LD_LIBRARY_PATH puts %s before %s: programs run here without cudaenv "
                     "dlopen(\"%s\") %s; verified as `cudaenv exec %s` runs them (`cudaenv use %s` fixes "
                     "this shell)\n", d, st->r->tc.name, soname, creal, st->r->tc.name, st->r->tc.name);
        } else {
            st_failf(s, "%s in LD_LIBRARY_PATH shadows this toolchain: programs that dlopen(\"%s\") get %s "
                     "instead of %s; remove %s from LD_LIBRARY_PATH, or run: cudaenv use %s",
                     cand, soname, creal, ours, d, st->r->tc.name);
        }
        found++;
        break;
    }
    free(dup);
    return found;
}

int st_ld_shadows(st_state *st, st_step *s, const char *soname, const char *ours_path)
{
    const char *shell = st->opt->shell_ld_path;
    const char *lp = getenv("LD_LIBRARY_PATH");
    if (shell && (!lp || strcmp(shell, lp) != 0)) search_ld_path(st, s, shell, true, soname, ours_path);
    return search_ld_path(st, s, lp, false, soname, ours_path);
}

/* Outside LD_LIBRARY_PATH a plain dlopen() falls back to ld.so.cache: say
 * what a program that does not run under this toolchain would get. */
static void note_cache(st_state *st, st_step *s, const char *sonames[], int n)
{
    const char *lp = getenv("LD_LIBRARY_PATH");
    char libdir_real[4096];
    if (!realpath(st->libdir, libdir_real)) return;
    if (lp && strstr(lp, st->libdir)) return;  /* activated: the toolchain's dir is searched */
    char out[65536];
    ce_proc_result res;
    char *argv[] = { "/sbin/ldconfig", "-p", NULL };
    if (access(argv[0], X_OK) != 0) argv[0] = "/usr/sbin/ldconfig";
    if (ce_proc_output(NULL, argv, NULL, 10, out, sizeof out, &res) != CE_OK || res.code != 0) return;
    for (int i = 0; i < n; i++) {
        if (!sonames[i][0]) continue;
        char key[160];
        snprintf(key, sizeof key, "\t%s ", sonames[i]);
        const char *p = strstr(out, key);
        if (!p) continue;
        const char *arrow = strstr(p, "=> ");
        if (!arrow) continue;
        char path[1024];
        if (sscanf(arrow + 3, "%1023s", path) != 1) continue;
        char real[4096];
        if (realpath(path, real) && inside(real, libdir_real)) continue;
        st_note(s, "note: outside cudaenv a plain dlopen(\"%s\") gets %s (ld.so.cache); "
                "`cudaenv use %s` or `cudaenv exec %s -- CMD` put this toolchain first",
                sonames[i], path, st->r->tc.name, st->r->tc.name);
    }
}

void st_loader_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_LOADER];
    scan_ctx sc = { .st = st, .s = s };
    if (!realpath(st->r->tc.prefix, sc.prefix_real)) {
        st_failf(s, "cannot resolve %s", st->r->tc.prefix);
        return;
    }
    if (!st->rt.h && !st->nv.h && !st->dnn.h) {
        st_failf(s, "none of the toolchain's libraries could be loaded (see versions)");
        return;
    }
    scan_roots(&sc);
    check_handle(s, st->rt.h, "libcudart", st->rt.path);
    check_handle(s, st->nv.h, "libnvrtc", st->nv.path);
    check_handle(s, st->dnn.h, "libcudnn", st->dnn.path);
    dl_iterate_phdr(scan_one, &sc);
    int shadows = 0;  /* each one is a failure recorded with its path */
    if (st->rt.h) shadows += st_ld_shadows(st, s, st->rt.soname, st->rt.path);
    if (st->nv.h) shadows += st_ld_shadows(st, s, st->nv.soname, st->nv.path);
    if (st->dnn.h) shadows += st_ld_shadows(st, s, st->dnn.soname, st->dnn.path);
    if (st->nv_builtins_soname[0]) {
        char b[CE_PATH_MAX];
        if (ce_path_join(b, sizeof b, st->libdir, st->nv_builtins_soname) == CE_OK)
            shadows += st_ld_shadows(st, s, st->nv_builtins_soname, b);
    }
    const char *sonames[] = { st->rt.soname, st->nv.soname, st->dnn.soname };
    note_cache(st, s, sonames, 3);
    st->loaded_checked = sc.ours;
    if (s->status != ST_FAILED)
        st_pass(s, "%d libraries mapped from %s; nothing in LD_LIBRARY_PATH shadows them", sc.ours,
                st->r->tc.prefix);
}

void st_loader_late(st_state *st)
{
    st_step *s = &st->r->steps[ST_LOADER];
    scan_ctx sc = { .st = st, .s = s, .quiet_ok = true };
    if (!realpath(st->r->tc.prefix, sc.prefix_real)) return;
    scan_roots(&sc);
    dl_iterate_phdr(scan_one, &sc);
    if (sc.ours > st->loaded_checked)
        st_note(s, "after the GPU steps: %d toolchain libraries mapped (%d more, e.g. cuDNN's parts and "
                "NVRTC's builtins), %s", sc.ours, sc.ours - st->loaded_checked,
                sc.problems ? "see the failures above" : "all from the toolchain");
    if (s->status == ST_PASSED)
        st_pass(s, "%d libraries mapped from %s; nothing in LD_LIBRARY_PATH shadows them", sc.ours,
                st->r->tc.prefix);
}
