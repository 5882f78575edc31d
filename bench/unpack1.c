/* bench/split.sh's driver: one archive unpacked by ce_unpack as an install
 * unpacks a cached component (its sha256 checked, strip_top, the per-file
 * index written), timed with the monotonic clock.  Not part of cudaenv:
 * built by bench/split.sh against a build's objects.
 *   unpack1 ARCHIVE DEST INDEX [SHA256]  -> "seconds rc" on stdout */
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "archive/unpack.h"
#include "core/ctx.h"
#include "core/status.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: unpack1 ARCHIVE DEST INDEX [SHA256]\n");
        return 2;
    }
    struct stat st;
    if (stat(argv[1], &st) != 0) {
        perror(argv[1]);
        return 2;
    }
    ce_ctx ctx;
    ce_ctx_init(&ctx);
    ce_unpack_src src = { .path = argv[1], .label = argv[1], .size = (long long)st.st_size,
                          .sha256 = argc > 4 ? argv[4] : NULL, .strip_top = true, .hash_index = argv[3] };
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = ce_unpack(&ctx, &src, argv[2]);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (rc) fprintf(stderr, "%s\n", ce_errmsg());
    printf("%.3f %d\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9, rc);
    return rc;
}
