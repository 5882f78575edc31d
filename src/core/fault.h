/* Fault points: named places where a test may act on a running cudaenv
 * (kill it, remove a file, report what it sees, hand it a value).
 *
 * The product defines no ce_test_point: the weak reference below stays NULL
 * and each point costs one comparison; nothing in the product reads a test
 * variable.  The test double tests/doubles/seams.c defines it, loaded with
 * LD_PRELOAD by the scenario tests (tests/lib/common.bash: seams) or linked
 * into the unit tests; it reads the CUDAENV_TEST_* variables and decides.
 * As root nothing changes: whoever can set LD_PRELOAD runs code already.
 *
 * The points (name: arg, what the double may do):
 *   switch-trust, switch-intent, switch-link, switch-conf, switch-ldconfig:
 *       NULL; a system switch step is done (system/system.c)
 *   during-download: const char *part; bytes of a download are on disk
 *   after-unpack, before-commit: NULL; an install's trees are unpacked /
 *       composed and about to be published (install/parts.c, for both routes)
 *   unpack-start: const char *cache; a parts unpacker may start on it; a
 *       nonzero return holds it back (install/unpackers.c)
 *   digest: const long long *bytes; a sha256 was finished over that many bytes
 *   xz-start: NULL; xz-done: const long long r[2] = { threads that decoded
 *       (-1: the decoder did not count them), blocks decoded into a file }
 *   machine-libdir: const char **dir; the driver's library directory
 *   verify-libcuda: const char **path; the libcuda verify loads
 *   repack-out: ce_fault_bytes *; bytes a site repack is about to hash and
 *       write, from offset off of its output (archive/repack.c) */
#ifndef CE_FAULT_H
#define CE_FAULT_H

typedef struct ce_fault_bytes {
    unsigned char *p;
    size_t len;
    long long off;
} ce_fault_bytes;

int ce_test_point(const char *name, void *arg) __attribute__((weak));

static inline int ce_fault_point(const char *name, void *arg)
{
    return ce_test_point ? ce_test_point(name, arg) : 0;
}

#endif
