/* Test double: run a command on a kernel or filesystem whose copy_file_range
 * fails with a chosen errno (a seccomp filter, inherited across exec).
 *
 *   nocfr ERRNO CMD [ARG...]      ERRNO: EXDEV ENOSYS EINVAL EOPNOTSUPP EIO
 *
 * EXDEV: files on two filesystems (before Linux 5.3); ENOSYS: a kernel before
 * 4.5; EINVAL/EOPNOTSUPP: a filesystem that does not support it (some FUSE,
 * NFS, overlay setups); EIO: a disk that fails the read.
 * Built at test time: cc -o nocfr nocfr.c */
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
#error "nocfr: add this architecture's AUDIT_ARCH"
#endif

int main(int argc, char **argv)
{
    static const struct { const char *name; int e; } errs[] = {
        { "EXDEV", EXDEV }, { "ENOSYS", ENOSYS }, { "EINVAL", EINVAL },
        { "EOPNOTSUPP", EOPNOTSUPP }, { "EIO", EIO },
    };
    int e = -1;
    if (argc >= 3)
        for (size_t i = 0; i < sizeof errs / sizeof *errs; i++)
            if (!strcmp(argv[1], errs[i].name)) e = errs[i].e;
    if (e < 0) {
        fprintf(stderr, "usage: nocfr EXDEV|ENOSYS|EINVAL|EOPNOTSUPP|EIO CMD [ARG...]\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_copy_file_range, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)e),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof f / sizeof *f, f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("nocfr: seccomp");
        return 77;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
