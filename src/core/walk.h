/* The one tree walker (in place of nftw, whose callback has no user pointer
 * and so made every caller pass its state through statics).  Depth-first,
 * fd-relative (openat/fstatat with AT_SYMLINK_NOFOLLOW, entries read with
 * ce_dirscan), never following a symlink (the top included: a top that is a
 * symlink is reported, not entered), crossing into other file systems as
 * nftw does.  However deep the tree, it holds at most CE_WALK_FDS directory
 * descriptors: an ancestor's is closed and opened again through ".." (its
 * device and inode checked) on the way back up. */
#ifndef CE_WALK_H
#define CE_WALK_H

#include <sys/stat.h>

#define CE_WALK_FDS 32

typedef enum ce_walk_kind {
    CE_WALK_ENTRY,    /* anything not a directory: file, symlink, device... (st says which) */
    CE_WALK_DIR,      /* a directory, before its entries (pre-order) */
    CE_WALK_DIR_POST, /* the same directory, after its entries (post-order) */
    CE_WALK_ERR,      /* a directory that cannot be read (st set) or an entry that cannot be
                       * lstat'ed (st NULL): err is the errno; its entries are not walked */
} ce_walk_kind;

typedef struct ce_walk_entry {
    const char *path;         /* the top joined with every name below it */
    const char *name;         /* its last component (the top: path itself) */
    int dirfd;                /* the directory holding name (the top: AT_FDCWD) */
    const struct stat *st;    /* lstat of it; NULL only for CE_WALK_ERR without one */
    int depth;                /* 0 for the top, 1 for its entries... */
    ce_walk_kind kind;
    int err;                  /* CE_WALK_ERR: the errno */
} ce_walk_entry;

/* Called for every entry, in the order the directories list them: 0 goes
 * on, anything else (a ce_err) stops the walk and is ce_walk's return. */
typedef int (*ce_walk_fn)(const ce_walk_entry *e, void *arg);

/* The walk's own failure (above every ce_err): errno says why. */
#define CE_WALK_FAIL 1

/* Walk top and everything under it.  0 when every entry was reported; the
 * callback's return when it stopped the walk; CE_WALK_FAIL with errno when
 * top cannot be lstat'ed, memory runs out, or a directory left for a deeper
 * one is not the one found again through "..". */
int ce_walk(const char *top, ce_walk_fn fn, void *arg);

#endif
