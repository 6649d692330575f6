/* Making a medium from a path (stream-format.md): the settings' defaults,
 * the factories that choose the file or the segmented backend, and what
 * opening cut (torn tails, revision 4). The
 * backends wrap themselves through medium.c; nothing there calls back
 * here. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "stream/internal.h"
#include "stream/jetstream/jsm.h"

void dls_medium_settings_default(dls_medium_settings *s)
{
    memset(s, 0, sizeof *s);
    s->sync = DLS_SYNC_DATA;
    s->lock_timeout_ms = 5000;
    s->segment_bytes = 64ull << 20;
    s->retain_segments = 0;
    s->retain_bytes = 0;
    s->ring_capacity = 4096;
    s->id = NULL;
    s->exclusive = false;
}

static const dls_medium_settings *settings_or_default(const dls_medium_settings *s,
                                                      dls_medium_settings *tmp)
{
    if (s)
        return s;
    dls_medium_settings_default(tmp);
    return tmp;
}

static int check_settings(const dls_medium_settings *s, dls_where *w)
{
    if (s->sync != DLS_SYNC_NONE && s->sync != DLS_SYNC_DATA && s->sync != DLS_SYNC_GROUP)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "unknown sync policy", 0);
    return 0;
}

int dls_medium_create(dls_medium **out, dls_medium_kind kind, const char *path,
                      const dls_medium_settings *s, dls_where *w)
{
    dls_medium_settings tmp;
    if (!out || !path)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "no output or no path", 0);
    *out = NULL;
    s = settings_or_default(s, &tmp);
    int rc = check_settings(s, w);
    if (rc)
        return rc;
    if (dls_jetstream_is_url(path) && (kind == DLS_MEDIUM_FILE || kind == DLS_MEDIUM_JETSTREAM))
        return dls_st_jetstream(out, path, DLS_OPEN_APPEND, true, s, w);
    if (kind == DLS_MEDIUM_FILE)
        return dls_st_file_create(out, path, s, w);
    if (kind == DLS_MEDIUM_SEGMENTED)
        return dls_st_segmented_create(out, path, s, w);
    return dls_st_fail(w, DLS_ERR_INVAL, 0,
                       "only file and segmented media are created from a path", 0);
}

int dls_medium_open(dls_medium **out, const char *path, dls_open_mode mode,
                    const dls_medium_settings *s, dls_where *w)
{
    dls_medium_settings tmp;
    if (!out || !path || (mode != DLS_OPEN_READ && mode != DLS_OPEN_APPEND))
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "no output, no path or unknown mode", 0);
    *out = NULL;
    s = settings_or_default(s, &tmp);
    int rc = check_settings(s, w);
    if (rc)
        return rc;
    if (dls_jetstream_is_url(path))
        return dls_st_jetstream(out, path, mode, false, s, w);
    struct stat st;
    if (stat(path, &st) < 0)
        return dls_st_fail(w, errno == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           errno == ENOENT ? "no such file or directory"
                                           : "cannot stat the medium",
                           errno);
    if (S_ISDIR(st.st_mode))
        return dls_st_segmented_open(out, path, mode, s, w);
    /* A FIFO would block the open (and every read) forever; a device or a
     * socket is no stream file either. The file backend
     * checks again on its descriptor, opened without blocking. */
    if (!S_ISREG(st.st_mode))
        return dls_st_fail(w, DLS_ERR_INVAL, 0, DLS_ST_NOT_REGULAR, 0);
    return dls_st_file_open(out, path, mode, s, w);
}

bool dls_medium_last_cut(dls_medium *m, dls_torn_cut *out)
{
    dls_st_tail *t;
    dls_st_sync *s;
    if (!m || !(dls_st_file_writer(m, &t, &s) || dls_st_seg_writer(m, &t, &s)))
        return false;
    if (t->cut.cuts == 0)
        return false;
    if (out)
        *out = t->cut;
    return true;
}
