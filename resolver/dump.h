/* daolease — the attribution fields of one `dump` row (cli.md, "JSON output
 * shapes"): kind, author, verified, why and the fact to show.
 *
 *     dls_dump_attrib *d;
 *     dls_dump_attrib_new(&d, medium_id, kr);      kr may be NULL (no --keyring)
 *     for each record: dls_dump_attrib_record(d, rec, n, &row); emit row
 *     dls_dump_attrib_del(d);
 *
 * Mapping: a seal is kind "seal", author/fact null, verified false, why
 * null; a payload that is not one msgpack map is kind "malformed", author
 * and fact null, why "malformed"; a bare fact is author null, verified
 * false, why "bare-fact", fact the record; an envelope shows the author
 * claimed (null when absent), verified and why as a signed resolver bound to
 * the medium answers ("unknown-author" for every well-formed envelope when
 * no keyring, or an empty one, was given), and its inner fact when the fact
 * bytes are one complete msgpack value.
 *
 * Internal to the project (used by the CLI), not part of the installed API.
 */
#ifndef DLS_RESOLVER_DUMP_H
#define DLS_RESOLVER_DUMP_H

#include <stdbool.h>

#include "daolease/attrib.h"

typedef struct dls_dump_row {
    const char *kind;    /* "envelope" | "fact" | "seal" | "malformed" | "batch" */
    bool has_index;      /* a fact of a batch: "index" follows "position" */
    uint32_t index;
    bool has_author;     /* false: JSON null */
    dls_bytes author;    /* borrowed from the record */
    bool verified;
    const char *why;     /* NULL: JSON null; else one of cli.md's words */
    bool has_fact;       /* false: JSON null */
    dls_bytes fact;      /* one complete msgpack value, borrowed from the record */
} dls_dump_row;

typedef struct dls_dump_attrib dls_dump_attrib;

/* Binds to a medium id; kr may be NULL (a reference is taken otherwise).
 * Errors: DLS_ERR_INVAL, DLS_ERR_NOMEM, DLS_ERR_SODIUM. */
int dls_dump_attrib_new(dls_dump_attrib **out, const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                        dls_keyring *kr);
void dls_dump_attrib_del(dls_dump_attrib *d);

/* The rows of one record (cli.md rev 4): one row, except for a
 * well-formed batch envelope, which gives one row per fact — kind "batch",
 * its index, the batch's author, verified and why (one verification for
 * the whole batch), the fact when it is one complete msgpack value, else
 * null. A malformed batch is one row of kind "envelope", why "malformed",
 * fact null. Plain data borrowing from the record and from d. */
typedef struct dls_dump_rows {
    dls_dump_row first;  /* the row of a non-batch record */
    bool batch, done;
    dls_facts it;        /* a batch's facts, as carried */
} dls_dump_rows;

/* Starts the rows of one record payload. Never allocates. */
void dls_dump_attrib_rows(dls_dump_attrib *d, const uint8_t *rec, size_t n,
                          dls_dump_rows *rows);

/* The next row; false when all were given. */
bool dls_dump_rows_next(dls_dump_rows *rows, dls_dump_row *row);

/* Fills *row with the first row of one record payload. Never allocates. */
void dls_dump_attrib_record(dls_dump_attrib *d, const uint8_t *rec, size_t n,
                            dls_dump_row *row);

/* One-shot form (allocates a resolver for the call). */
int dls_dump_fields(const uint8_t *rec, size_t n, dls_keyring *kr,
                    const uint8_t medium_id[DLS_MEDIUM_ID_LEN], dls_dump_row *row);

#endif
