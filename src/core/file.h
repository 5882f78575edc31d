/* Filesystem helpers shared by the store, activation and system switch:
 * whole-file reads, atomic writes (temp + fsync + rename), mkdir -p, rm -rf. */
#ifndef CE_FILE_H
#define CE_FILE_H

#include <stddef.h>
#include <stdbool.h>

#include "ctx.h"
#include "path.h"

/* Open a regular file for reading, never blocking: a FIFO, device or
 * directory (checked on the resolved target) is refused, CE_ERR_IO.
 * Returns the fd or a negative ce_err. */
int ce_open_regular(const char *path);
/* At most cap - 1 bytes from the start of a regular file, NUL-terminated. */
int ce_file_head(const char *path, char *buf, size_t cap, size_t *len);
/* Read a whole file (at most max bytes) into a NUL-terminated malloc'ed buffer. */
int ce_file_read(const char *path, size_t max, char **data, size_t *len);
/* The same from an open fd (closed here); path names it in messages. */
int ce_file_read_fd(int fd, const char *path, size_t max, char **data, size_t *len);
/* Write data to path atomically: path.tmp-XXXXXX (exclusive), fsync, rename, fsync dir. */
int ce_file_write_atomic(const char *path, const void *data, size_t len, int mode);
/* The same; sync_dir false leaves the fsync of path's directory to the
 * caller (several renames, one directory fsync each, batched). */
int ce_file_write_atomic_ex(const char *path, const void *data, size_t len, int mode, bool sync_dir);

/* The same beneath the directory fd dfd (core/priv.h: ce_priv_dir_make):
 * name a plain file name, the temporary file created O_EXCL|O_NOFOLLOW
 * beneath dfd and renamed over name there, dfd fsynced; dir names the
 * directory in messages.  Nothing re-pointed on the way redirects it. */
int ce_file_write_atomic_at(int dfd, const char *dir, const char *name, const void *data, size_t len,
                            int mode);

/* The same in steps, for several files made durable together (the system
 * switch): stage writes path.tmp-XXXXXX and starts its writeback;
 * stage_sync fsyncs and closes n staged files (they share the journal
 * commit); stage_commit renames one over its path (no directory fsync);
 * stage_drop removes what is left of one (safe to call twice).  On error
 * each drops its own file(s). */
typedef struct ce_staged {
    int fd;
    char path[4200], tmp[4220];
} ce_staged;
int ce_file_stage(const char *path, const void *data, size_t len, int mode, ce_staged *st);
int ce_file_stage_sync(ce_staged *st, size_t n);
int ce_file_stage_commit(ce_staged *st);
void ce_file_stage_drop(ce_staged *st);
/* Append whole lines (len bytes of text) to a small record file in one
 * write (O_APPEND: writers at once never cut each other's lines), creating
 * it 0644; past max bytes it starts over (truncated first).  Not synced:
 * for records that are only a help (a cache's labels, where blobs came
 * from).  A symlink, FIFO or directory at path: nothing written.  0 or the
 * errno. */
int ce_file_append_bounded(const char *path, const void *text, size_t len, size_t max);
/* mkdir -p with mode for created directories. */
int ce_mkdir_p(const char *path, int mode);
/* out = a "/" b (ce_path_join); CE_ERR_OTHER naming both when it does not
 * fit in outsz (CE_PATH_MAX for a path buffer). */
int ce_join(char *out, size_t outsz, const char *a, const char *b);
/* fsync a directory (after rename into it). */
int ce_fsync_dir(const char *path);
/* fsync n (at most 8) descriptors (files or directories) at once: one thread each but
 * the first, so their waits overlap (on a journalling file system they join
 * one commit) instead of adding up.  0, or the errno of a failed one. */
int ce_fsync_fds(const int *fds, size_t n);
/* All n bytes of buf into fd at offset off (EINTR retried): 0, or the errno
 * (ENOSPC for a write that wrote nothing). */
int ce_pwrite_all(int fd, const void *buf, size_t n, long long off);
/* n bytes of fd at offset off into buf: 0, or the errno (EIO when the file
 * ends first). */
int ce_pread_all(int fd, void *buf, size_t n, long long off);
bool ce_is_dir(const char *path);
bool ce_exists(const char *path);

#endif
