#include "dirscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int ce_dirscan_open(ce_dirscan *s, int dirfd, const char *path)
{
    s->pos = s->len = 0;
    s->fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY);
    return s->fd < 0 ? -1 : 0;
}

void ce_dirscan_fd(ce_dirscan *s, int fd)
{
    s->pos = s->len = 0;
    s->fd = fd;
}

const char *ce_dirscan_next(ce_dirscan *s, unsigned char *type)
{
    if (s->pos >= s->len) {
        ssize_t n;
        do n = getdents64(s->fd, s->buf, sizeof s->buf);
        while (n < 0 && errno == EINTR);
        if (n <= 0) return NULL;
        s->len = (int)n;
        s->pos = 0;
    }
    struct dirent64 *d = (struct dirent64 *)(s->buf + s->pos);
    s->pos += d->d_reclen;
    if (type) *type = d->d_type;
    return d->d_name;
}

void ce_dirscan_close(ce_dirscan *s)
{
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
}
