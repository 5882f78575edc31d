/* Removing a tree that cannot wedge the removal: it works relative to
 * directory descriptors (openat/unlinkat, never a full path below the top),
 * holds one descriptor at a time however deep the tree is (the way back up
 * is "..", the names entered are kept in memory), never follows a symlink,
 * never crosses into another filesystem, and opens up read-only
 * directories of ours.  For staging trees, which an archive may make deeper
 * than PATH_MAX. */
#ifndef CE_RMTREE_H
#define CE_RMTREE_H

#include "ctx.h"

/* Remove path and everything under it (a missing path is CE_OK); CE_ERR_IO
 * naming it otherwise. */
int ce_rm_tree(const char *path);

#endif
