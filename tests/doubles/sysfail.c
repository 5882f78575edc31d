/* Test double: run a command on a kernel or filesystem where one system call
 * always fails with a chosen errno (a seccomp filter, inherited across exec).
 *
 *   sysfail SYSCALL ERRNO CMD [ARG...]
 *     SYSCALL: copy_file_range fsync fdatasync
 *     ERRNO:   EXDEV ENOSYS EINVAL EOPNOTSUPP EIO
 *
 * copy_file_range with EXDEV: files on two filesystems (before Linux 5.3);
 * ENOSYS: a kernel before 4.5; EINVAL/EOPNOTSUPP: a filesystem without it
 * (some FUSE, NFS, overlay setups); EIO: a disk that fails the read.
 * fsync/fdatasync with EIO: a disk that fails the writeback.
 * Built at test time: cc -o sysfail sysfail.c */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "sysfail: add this architecture's AUDIT_ARCH"
#endif

int main(int argc, char **argv)
{
    static const struct { const char *name; int e; } errs[] = {
        { "EXDEV", EXDEV }, { "ENOSYS", ENOSYS }, { "EINVAL", EINVAL },
        { "EOPNOTSUPP", EOPNOTSUPP }, { "EIO", EIO },
    };
    static const struct { const char *name; long nr; } calls[] = {
        { "copy_file_range", SYS_copy_file_range }, { "fsync", SYS_fsync }, { "fdatasync", SYS_fdatasync },
    };
    int e = -1;
    long nr = -1;
    if (argc >= 4) {
        for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
            if (!strcmp(argv[1], calls[i].name)) nr = calls[i].nr;
        for (size_t i = 0; i < sizeof errs / sizeof *errs; i++)
            if (!strcmp(argv[2], errs[i].name)) e = errs[i].e;
    }
    if (e < 0 || nr < 0) {
        fprintf(stderr, "usage: sysfail copy_file_range|fsync|fdatasync EXDEV|ENOSYS|EINVAL|EOPNOTSUPP|EIO CMD [ARG...]\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)e),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof *f, f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("sysfail: seccomp");
        return 77;
    }
    execvp(argv[3], argv + 3);
    perror(argv[3]);
    return 127;
}
