/* Test double: run a command on a kernel or filesystem where one system call
 * always fails with a chosen errno (a seccomp filter, inherited across exec).
 *
 *   sysfail SYSCALL[,SYSCALL...] ERRNO CMD [ARG...]
 *     SYSCALL: copy_file_range fsync fdatasync link linkat
 *     ERRNO:   EXDEV ENOSYS EINVAL EOPNOTSUPP EIO
 *
 * copy_file_range with EXDEV: files on two filesystems (before Linux 5.3);
 * ENOSYS: a kernel before 4.5; EINVAL/EOPNOTSUPP: a filesystem without it
 * (some FUSE, NFS, overlay setups); EIO: a disk that fails the read.
 * fsync/fdatasync with EIO: a disk that fails the writeback.
 * link,linkat with EXDEV: a store whose trees cannot be hard-linked (compose
 * copies instead).
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
#ifdef SYS_link
        { "link", SYS_link },
#endif
        { "linkat", SYS_linkat },
    };
    int e = -1;
    long nr[8];
    size_t n = 0;
    int bad = argc < 4;
    if (!bad) {
        char names[256];
        snprintf(names, sizeof names, "%s", argv[1]);
        for (char *tok = strtok(names, ","); tok && !bad; tok = strtok(NULL, ",")) {
            long found = -1;
            for (size_t i = 0; i < sizeof calls / sizeof *calls; i++)
                if (!strcmp(tok, calls[i].name)) found = calls[i].nr;
            if (!strcmp(tok, "link") && found < 0) continue;   /* no link(2) here: linkat does it */
            if (found < 0 || n == sizeof nr / sizeof *nr) bad = 1;
            else nr[n++] = found;
        }
        for (size_t i = 0; i < sizeof errs / sizeof *errs; i++)
            if (!strcmp(argv[2], errs[i].name)) e = errs[i].e;
    }
    if (bad || e < 0 || n == 0) {
        fprintf(stderr, "usage: sysfail copy_file_range|fsync|fdatasync|link|linkat[,...] "
                        "EXDEV|ENOSYS|EINVAL|EOPNOTSUPP|EIO CMD [ARG...]\n");
        return 2;
    }
    /* arch check, load nr, one JEQ per call (all jump to the errno return) */
    struct sock_filter f[4 + 8 + 2];
    size_t k = 0;
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (size_t i = 0; i < n; i++)   /* match: skip to the errno return, after the rest and the allow */
        f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr[i], (unsigned char)(n - i), 0);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)e);
    struct sock_fprog prog = { (unsigned short)k, f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("sysfail: seccomp");
        return 77;
    }
    execvp(argv[3], argv + 3);
    perror(argv[3]);
    return 127;
}
