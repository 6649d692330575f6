/* daolease command — reading a journal and its media as an operator
 * (`status`, `watch`). Only records and marks are read:
 * no judge runs, nothing is written, no lock is taken.
 *
 * With a keyring (and the grantor's name) every journal record must verify
 * under the grantor's key and every media record under its author's (or be
 * a bare fact of the medium's party); without one the records are taken as
 * they claim (fast, and said so in the output: "verified": false). */
#ifndef DLS_CLI_JVIEW_H
#define DLS_CLI_JVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/mark.h"
#include "daolease/stream.h"

/* A journal reader: a cursor and an attribution rule. */
typedef struct jv_reader {
    dls_medium *m;
    dls_cursor *c;
    dls_resolver *r;
    const char *grantor;     /* NULL: any author */
    bool verify;             /* a keyring was given */
    uint64_t records;        /* records read */
    uint64_t counted;        /* of which attributed as required (not JV_OTHER) */
    uint64_t err_position;   /* jv_next answered -2: the position … */
    dls_where err;           /* … and why */
} jv_reader;

/* What one journal record is. */
typedef enum jv_kind { JV_OTHER = 0, JV_MARK, JV_FACT } jv_kind;

typedef struct jv_record {
    jv_kind kind;
    uint64_t position;
    dls_mark_view mark;      /* JV_MARK (first or continuation record) */
    dls_fact fact;           /* JV_FACT: a valid lease fact */
} jv_record;

/* Opens `path` for reading with a resolver (signed under kr when kr is not
 * NULL). Prints one line and returns the code on failure. */
int jv_open(jv_reader *jr, const char *sub, const char *path, dls_keyring *kr,
            const char *grantor, uint64_t from);
void jv_close(jv_reader *jr);

/* The next record: 1 with *out filled (slices borrow from the cursor until
 * the next call), 0 when blocked (or at a gap), -1 at the end (sealed), -2
 * on a transport error (jr->err_position, jr->err). Records not attributed
 * as required are JV_OTHER. */
int jv_next(jv_reader *jr, jv_record *out);

/* A resolver for a lease-fact medium: `signed` under kr, or `medium`
 * naming `party` (bare facts are its); without kr and party, envelopes are
 * taken as they claim. */
int jv_media_resolver(dls_resolver **out, dls_medium *m, dls_keyring *kr, const char *party);

/* The author of a record as the reader counts it: the verified author when
 * verifying, else the name claimed. False when it does not count. */
bool jv_author(bool verify, const dls_attribution *a);

#endif
