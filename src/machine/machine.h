/* The machine seam: every read doctor and the install preflight make of
 * /proc, /sys, /dev, /etc, /usr/local and /usr/lib goes through here, joined
 * to the root given by CUDAENV_SYSROOT, so tests can hand them a fake
 * machine (a directory tree) and a real run reads the real one.
 *
 * The driver libraries (libnvidia-ml.so.1, libcuda.so.1) are dlopened
 * through the normal loader search, or from the directory a test hands in at
 * the machine-libdir fault point (core/fault.h: the doubles the scenario
 * tests build).
 *
 * Device nodes: on the real root a node must be a character device; under a
 * sysroot any existing file counts, because fixtures cannot mknod without
 * privileges (a plain file stands for the node). */
#ifndef CE_MACHINE_H
#define CE_MACHINE_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/ctx.h"

typedef struct ce_machine {
    char root[CE_PATH_MAX];     /* "" means the real / */
    char libdir[CE_PATH_MAX];   /* a test's driver library dir (machine-libdir), "" when none */
} ce_machine;

void ce_machine_init(ce_machine *m, const ce_ctx *ctx);
/* The host path of a system path ("/proc/driver/nvidia/version"). */
void ce_machine_path(const ce_machine *m, const char *abs, char *out, size_t outsz);
/* Read a small file into buf (NUL-terminated); length read, or -1. */
ssize_t ce_machine_read(const ce_machine *m, const char *abs, char *buf, size_t bufsz);
bool ce_machine_exists(const ce_machine *m, const char *abs);
bool ce_machine_is_dir(const ce_machine *m, const char *abs);
bool ce_machine_devnode(const ce_machine *m, const char *abs);
/* 1: abs is a symlink (target in out, as written), 0: exists and is not a
 * link, -1: does not exist. */
int ce_machine_readlink(const ce_machine *m, const char *abs, char *out, size_t outsz);
DIR *ce_machine_opendir(const ce_machine *m, const char *abs);
/* Resolve every symlink of a system path inside the root (an absolute link
 * target is taken relative to the root, the way a chroot sees it).  out is
 * the resolved *system* path; returns 0 when it exists, -1 when a component
 * is missing (out then holds what was resolved so far plus the rest). */
int ce_machine_resolve(const ce_machine *m, const char *abs, char *out, size_t outsz);

/* dlopen a driver library (see above); where gets the file it came from or
 * the dlerror() text.  NULL when it cannot be loaded. */
void *ce_machine_dlopen(const ce_machine *m, const char *soname, char *where, size_t wsz);

/* Same file (device and inode after following links) for two host paths. */
bool ce_same_file(const char *a, const char *b);
/* An ELF shared object of this process's class (what ld.so would accept). */
bool ce_elf_usable(const char *hostpath);

#endif
