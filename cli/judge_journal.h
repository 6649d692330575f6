/* daolease judge — its journal (cli/judge_journal.c). */
#ifndef DLS_CLI_JUDGE_JOURNAL_H
#define DLS_CLI_JUDGE_JOURNAL_H

#include <stdbool.h>

#include "cli/config.h"
#include "daolease/judge.h"
#include "daolease/stream.h"

/* Opens the configuration's journal into *out (judge.md, Assembly): a file
 * journal `exclusive` (its writer lock held for the process's lifetime), a
 * redis:// or nats:// one as its medium fences a writer; created only when
 * `create` (--create, "create_journal", --lost-ledger), never a silent
 * fresh ledger. A standby follows an existing journal (docs/standby.md).
 * Failures are said on stderr, one line naming the journal; the code is
 * answered. */
int dls_cli_judge_journal(dls_medium **out, const dls_config *cfg, bool create, bool standby);

/* The lost-ledger procedure (judge.md, Restart) on a new journal: each
 * line of the inventory file at `path` is re-granted (see
 * cli/judge_journal.c for its form). Failures are said naming the line. */
int dls_cli_lost_ledger(dls_judge *j, const dls_config *cfg, const char *path);

#endif
