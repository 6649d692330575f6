/* Test hooks of the checkpoint retention (judge/checkpoint_prune.c): the same
 * prune and trim as dls_judge_prune_checkpoints and dls_judge_trim_journal,
 * with a call before each checkpoint file is opened for reading (its header
 * or its digest), so that a test can make that one open fail for real (e.g.
 * lower RLIMIT_NOFILE: EMFILE) after the folder was listed. Internal: the
 * tests link the core archive; the public functions pass NULL. */
#ifndef DLS_JUDGE_CHECKPOINT_HOOKS_H
#define DLS_JUDGE_CHECKPOINT_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "daolease/checkpoint.h"

typedef struct jc_hooks {
    /* optional: `path` is the checkpoint file about to be opened */
    void (*before_open)(void *user, const char *path);
    void *user;
} jc_hooks;

int jc_prune_checkpoints(dls_judge *j, const char *dir, size_t keep, size_t *deleted,
                         dls_where *w, const jc_hooks *hooks);
int jc_trim_journal(dls_judge *j, const char *dir, uint64_t *before, uint64_t *oldest,
                    dls_where *w, const jc_hooks *hooks);

#endif
