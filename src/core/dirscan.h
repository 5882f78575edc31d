/* Reading a directory with getdents64 into a buffer the caller holds (on its
 * stack): no DIR, so no 32 KiB allocation to fault in and no fstat per
 * directory.  env/use read two or three directories at every start as root
 * (the store check, the toolchain list): issue 13. */
#ifndef CE_DIRSCAN_H
#define CE_DIRSCAN_H

typedef struct ce_dirscan {
    int fd;
    int pos, len;
    _Alignas(8) char buf[2048];
} ce_dirscan;

/* Open path (relative to dirfd, AT_FDCWD for a plain path) as opendir does.
 * 0, or -1 with errno (ENOENT when it does not exist). */
int ce_dirscan_open(ce_dirscan *s, int dirfd, const char *path);
/* Read fd, a directory the caller opened and closes (ce_walk: O_NOFOLLOW). */
void ce_dirscan_fd(ce_dirscan *s, int fd);
/* The next entry's name ("." and ".." included, as readdir) and its d_type
 * (DT_UNKNOWN when the file system does not say); NULL at the end or on a
 * read error (errno set then). */
const char *ce_dirscan_next(ce_dirscan *s, unsigned char *type);
void ce_dirscan_close(ce_dirscan *s);

#endif
