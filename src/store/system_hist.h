/* system.json's restore part (issue 11): the machine's original state and
 * the rollback history, read from and written to the record's JSON object,
 * and the history's push/pop rules.  Pure: no file system, no output. */
#ifndef CE_SYSTEM_HIST_H
#define CE_SYSTEM_HIST_H

#include <cjson/cJSON.h>

#include "system.h"

/* Fill rec->original / rec->history from j.  A record without "history"
 * (older cudaenv) starts its history with its prev_* selection. */
void ce_sys_hist_read(const cJSON *j, ce_sys_record *rec);
/* Add "original" (when present) and "history" to j. */
void ce_sys_hist_write(cJSON *j, const ce_sys_record *rec);
/* Push e on top unless it is rec's own target or already on top; the
 * oldest entry beyond CE_SYS_HISTORY is dropped. */
void ce_sys_hist_push(ce_sys_record *rec, const char *name, const char *target, const char *lib);
/* Remove the top entry into *out (false when empty). */
bool ce_sys_hist_pop(ce_sys_record *rec, ce_sys_entry *out);

#endif
