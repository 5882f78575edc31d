/* LD_PRELOAD for bench/peers.sh: fsync, fdatasync, syncfs, sync and
 * sync_file_range return at once, so two programs that sync a different
 * number of times are compared at equal durability (none, as with
 * eatmydata). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

int fsync(int fd) { (void)fd; return 0; }
int fdatasync(int fd) { (void)fd; return 0; }
int syncfs(int fd) { (void)fd; return 0; }
void sync(void) {}
int sync_file_range(int fd, off_t off, off_t n, unsigned int flags) { (void)fd; (void)off; (void)n; (void)flags; return 0; }
