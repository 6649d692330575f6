/* daolease command — a snapshot from the files alone (`serve`;
 * docs/observe.md): the journal and media read as `status` reads them. */
#ifndef DLS_CLI_OBSERVE_FILES_H
#define DLS_CLI_OBSERVE_FILES_H

#include "cli/observe/snap.h"
#include "cli/status_scan.h"

/* Reads the files `a` names into a new snapshot. Returns DLS_EXIT_OK with
 * *out, or DLS_EXIT_FAIL after one line on stderr. */
int obs_files_snapshot(const dls_status_args *a, obs_snap **out);

#endif
