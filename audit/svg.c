/* The audit's timeline picture (cli.md `audit --svg`): one row per subject,
 * each lease a bar over the reading axis of its basis from grant to lapse,
 * coloured by cause; renewals as ticks; failures in red; a legend; one axis
 * per reading basis, readings relative to the smallest on it.
 *
 * Every piece of text taken from the inputs (subjects, holders, bases) goes
 * through dls_abuf_xml: & < > " ' become entities, and control characters
 * and invalid UTF-8 become U+FFFD, so the output is well-formed XML whatever
 * the journal holds.
 */
#include "audit/internal.h"

#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vocab/mp.h"

/* ---- a growing text buffer ------------------------------------------------- */

void dls_abuf_put(dls_abuf *b, const char *s, size_t n)
{
    if (b->err || !n)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 4096;
        while (ncap < b->n + n + 1)
            ncap *= 2;
        char *np = realloc(b->p, ncap);
        if (!np) {
            b->err = DLS_ERR_NOMEM;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void dls_abuf_printf(dls_abuf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0) {
        b->err = DLS_ERR_INVAL;
        return;
    }
    if ((size_t)len < sizeof small) {
        dls_abuf_put(b, small, (size_t)len);
        return;
    }
    char *big = malloc((size_t)len + 1);
    if (!big) {
        b->err = DLS_ERR_NOMEM;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)len + 1, fmt, ap);
    va_end(ap);
    dls_abuf_put(b, big, (size_t)len);
    free(big);
}

static const char REPLACEMENT[] = "\xef\xbf\xbd"; /* U+FFFD */

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0 when the bytes
 * there are ill-formed; *skip is then the maximal ill-formed subpart's
 * length (at least 1), replaced by one U+FFFD (Unicode's recommended
 * practice). */
static size_t utf8_seq(const uint8_t *s, size_t n, size_t *skip, uint32_t *cp)
{
    uint8_t c = s[0];
    size_t need;
    uint8_t lo = 0x80, hi = 0xbf;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        need = 1;
        *cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        *cp = c & 0x0f;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        *cp = c & 0x07;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else {
        *skip = 1;
        return 0;
    }
    size_t i;
    for (i = 1; i <= need; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) {
            *skip = i;
            return 0;
        }
        *cp = (*cp << 6) | (s[i] & 0x3f);
        lo = 0x80;
        hi = 0xbf;
    }
    return need + 1;
}

void dls_abuf_xml(dls_abuf *b, const void *sv, size_t n)
{
    const uint8_t *s = sv;
    size_t i = 0;
    while (i < n) {
        uint32_t cp = 0;
        size_t skip = 1;
        size_t len = utf8_seq(s + i, n - i, &skip, &cp);
        if (!len) {
            dls_abuf_put(b, REPLACEMENT, 3);
            i += skip;
            continue;
        }
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0xfffe ||
            cp == 0xffff) {
            dls_abuf_put(b, REPLACEMENT, 3);
        } else if (cp == '&') {
            dls_abuf_put(b, "&amp;", 5);
        } else if (cp == '<') {
            dls_abuf_put(b, "&lt;", 4);
        } else if (cp == '>') {
            dls_abuf_put(b, "&gt;", 4);
        } else if (cp == '"') {
            dls_abuf_put(b, "&quot;", 6);
        } else if (cp == '\'') {
            dls_abuf_put(b, "&apos;", 6);
        } else {
            dls_abuf_put(b, (const char *)s + i, len);
        }
        i += len;
    }
}

/* ---- subject text ---------------------------------------------------------- */

typedef struct text_out {
    char *p;
    size_t n, cap; /* cap includes the NUL */
    bool cut;
} text_out;

static void tput(text_out *t, const void *s, size_t n)
{
    if (t->cut)
        return;
    if (t->n + n + 1 > t->cap) {
        n = t->cap - 1 - t->n;
        t->cut = true;
    }
    memcpy(t->p + t->n, s, n);
    t->n += n;
    t->p[t->n] = 0;
}

static void tprintf(text_out *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tprintf(text_out *t, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (len > 0)
        tput(t, tmp, (size_t)len < sizeof tmp ? (size_t)len : sizeof tmp - 1);
}

/* Writes one value at p[*off] and advances *off; depth-bounded recursion
 * (a subject nests at most 7 levels). Returns -1 on malformed input. */
static int render(text_out *t, const uint8_t *p, size_t n, size_t *off, int depth, bool quote)
{
    dls_mp_item it;
    if (depth > 16 || dls_mp_read(p, n, *off, &it))
        return -1;
    *off = it.end;
    switch (it.type) {
    case DLS_MP_NIL: tput(t, "null", 4); break;
    case DLS_MP_BOOL: tput(t, it.v.b ? "true" : "false", it.v.b ? 4 : 5); break;
    case DLS_MP_UINT: tprintf(t, "%" PRIu64, it.v.u); break;
    case DLS_MP_INT: tprintf(t, "%" PRId64, it.v.i); break;
    case DLS_MP_F32: tprintf(t, "%g", (double)it.v.f32); break;
    case DLS_MP_F64: tprintf(t, "%g", it.v.f64); break;
    case DLS_MP_STR:
        if (quote)
            tput(t, "\"", 1);
        tput(t, it.data, it.len);
        if (quote)
            tput(t, "\"", 1);
        break;
    case DLS_MP_BIN:
    case DLS_MP_EXT:
        tput(t, it.type == DLS_MP_BIN ? "0x" : "ext:0x", it.type == DLS_MP_BIN ? 2 : 6);
        for (uint32_t i = 0; i < it.len && !t->cut; i++) {
            char hx[3];
            tput(t, sodium_bin2hex(hx, sizeof hx, it.data + i, 1), 2);
        }
        break;
    case DLS_MP_ARRAY:
    case DLS_MP_MAP: {
        bool map = it.type == DLS_MP_MAP;
        tput(t, map ? "{" : "[", 1);
        for (uint32_t i = 0; i < it.len; i++) {
            if (i)
                tput(t, ",", 1);
            if (render(t, p, n, off, depth + 1, true))
                return -1;
            if (map) {
                tput(t, ":", 1);
                if (render(t, p, n, off, depth + 1, true))
                    return -1;
            }
        }
        tput(t, map ? "}" : "]", 1);
        break;
    }
    }
    return 0;
}

void dls_audit_subject_text(const uint8_t *p, size_t n, char *out, size_t cap)
{
    if (!cap)
        return;
    text_out t = {out, 0, cap, false};
    out[0] = 0;
    if (cap < 8)
        return;
    t.cap = cap - 3; /* room for "…" */
    size_t off = 0;
    if (render(&t, p, n, &off, 0, false)) {
        t.n = 0;
        t.cut = false;
        out[0] = 0;
        tput(&t, "(malformed)", 11);
    }
    if (t.cut) {
        memcpy(out + t.n, "\xe2\x80\xa6", 3); /* … */
        out[t.n + 3] = 0;
    }
}

/* ---- the picture ------------------------------------------------------------ */

void dls_audit_svg_settings_default(dls_audit_svg_settings *s)
{
    if (!s)
        return;
    s->width = 1200;
    s->max_rows = 200;
    s->title = NULL;
}

#define LABEL_W 230.0
#define RIGHT_M 20.0
#define BASIS_GAP 24.0
#define LANE_H 12.0
#define LANE_GAP 2.0
#define ROW_PAD 4.0
#define MAX_LANES 8

typedef struct bar {
    size_t lease;   /* index into the leases */
    size_t row;
    unsigned lane;
    double x0, x1;
} bar;

typedef struct axis {
    double x, w;    /* the section of the plot */
    uint64_t min, span;
} axis;

static const char *cause_colour(dls_cause c, bool live)
{
    if (live)
        return "#9e9e9e";
    switch (c) {
    case DLS_CAUSE_RELEASE: return "#43a047";
    case DLS_CAUSE_CAP: return "#fb8c00";
    case DLS_CAUSE_POLICY: return "#8e24aa";
    case DLS_CAUSE_SILENCE: return "#1e88e5";
    default: return "#9e9e9e";
    }
}

static bool is_failure(const dls_audit_lease *l)
{
    return l->verdict == DLS_AUDIT_DOUBLE_GRANT || l->verdict == DLS_AUDIT_UNJUSTIFIED_LAPSE ||
           l->verdict == DLS_AUDIT_DUE_MISMATCH;
}

static double xmap(const axis *ax, uint64_t r)
{
    uint64_t rel = r > ax->min ? r - ax->min : 0;
    if (rel > ax->span)
        rel = ax->span;
    return ax->x + ax->w * ((double)rel / (double)(ax->span ? ax->span : 1));
}

/* A readable relative reading: "+12.5 s", "+800 ms", "+3 min". */
static void fmt_rel(char *out, size_t cap, uint64_t ns, uint64_t step)
{
    double v = (double)ns;
    if (step >= 60000000000ull && ns % 60000000000ull == 0)
        snprintf(out, cap, "+%.0f min", v / 6e10);
    else if (step >= DLS_NS_PER_S)
        snprintf(out, cap, "+%g s", v / (double)DLS_NS_PER_S);
    else if (step >= DLS_NS_PER_MS)
        snprintf(out, cap, "+%g ms", v / (double)DLS_NS_PER_MS);
    else if (step >= DLS_NS_PER_US)
        snprintf(out, cap, "+%g us", v / (double)DLS_NS_PER_US);
    else
        snprintf(out, cap, "+%" PRIu64 " ns", ns);
}

/* A step of 1, 2 or 5 × 10^k ns giving at most `max_ticks` ticks. */
static uint64_t nice_step(uint64_t span, unsigned max_ticks)
{
    uint64_t p = 1;
    for (;;) {
        static const unsigned m[3] = {1, 2, 5};
        for (int i = 0; i < 3; i++) {
            uint64_t s = p * m[i];
            if (span / s <= max_ticks)
                return s;
        }
        if (p > UINT64_MAX / 10)
            return span ? span : 1;
        p *= 10;
    }
}

static void put_xml_text(dls_abuf *b, const char *s)
{
    dls_abuf_xml(b, s, strlen(s));
}

static void draw_legend(dls_abuf *b, double y)
{
    static const struct {
        const char *name, *colour;
    } items[] = {{"release", "#43a047"}, {"cap", "#fb8c00"}, {"policy", "#8e24aa"},
                 {"silence", "#1e88e5"}, {"live / no cause", "#9e9e9e"}};
    double x = 10;
    dls_abuf_printf(b, "<g class=\"legend\" font-size=\"11\">\n");
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        dls_abuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                        x, y - 9, items[i].colour, x + 18, y, items[i].name);
        x += 30 + 7.0 * (double)strlen(items[i].name);
    }
    dls_abuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"#ffffff\" "
                       "stroke=\"#d32f2f\" stroke-width=\"2\"/><circle cx=\"%.1f\" cy=\"%.1f\" "
                       "r=\"5\" fill=\"#d32f2f\"/><text x=\"%.1f\" y=\"%.1f\">failure "
                       "(double grant, unjustified lapse, due mismatch)</text>\n",
                    x, y - 9, x + 14, y - 4, x + 24, y);
    x += 336;
    dls_abuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"#ffffff\" "
                       "stroke=\"#212121\" stroke-dasharray=\"3,2\"/><text x=\"%.1f\" y=\"%.1f\">"
                       "unverifiable</text>\n",
                    x, y - 9, x + 18, y);
    x += 104;
    dls_abuf_printf(b, "<path d=\"M%.1f %.1fl-4 5h8z\" fill=\"#212121\"/><text x=\"%.1f\" "
                       "y=\"%.1f\">due (reclaimed later)</text>\n", x + 7, y - 6, x + 16, y);
    x += 150;
    dls_abuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#212121\" "
                       "stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\">renewal</text>\n",
                    x + 7, y - 11, x + 7, y + 1, x + 18, y);
    dls_abuf_printf(b, "</g>\n");
}

static void draw_axes(dls_abuf *b, const dls_audit *a, const axis *ax, double y, double bottom)
{
    const dls_audit_summary *s = &a->sum;
    for (size_t i = 0; i < s->n_bases; i++) {
        const axis *x = &ax[i];
        dls_abuf_printf(b, "<g class=\"axis\" font-size=\"10\">\n");
        dls_abuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" font-weight=\"bold\">"
                           "basis ", x->x, y - 18);
        dls_abuf_xml(b, s->bases[i].name.p, s->bases[i].name.n);
        dls_abuf_printf(b, " (passes %" PRIu64 "\xe2\x80\x93%" PRIu64 ")</text>\n",
                        s->bases[i].first_pass, s->bases[i].last_pass);
        dls_abuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#424242\"/>\n", x->x, y, x->x + x->w, y);
        uint64_t step = nice_step(x->span ? x->span : 1, 8);
        for (uint64_t r = 0; r <= x->span; r += step) {
            double px = xmap(x, x->min + r);
            char lab[48];
            fmt_rel(lab, sizeof lab, r, step);
            dls_abuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                               "stroke=\"#e0e0e0\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"#424242\"/><text x=\"%.1f\" y=\"%.1f\" "
                               "text-anchor=\"middle\">%s</text>\n",
                            px, y, px, bottom, px, y - 4, px, y, px, y - 6, lab);
            if (r > UINT64_MAX - step)
                break;
        }
        dls_abuf_printf(b, "</g>\n");
    }
}

static void lease_title(dls_abuf *b, const dls_audit_lease *l)
{
    char subj[96];
    dls_audit_subject_text(l->subject.p, l->subject.n, subj, sizeof subj);
    dls_abuf_printf(b, "<title>lease %" PRIu64 " ", l->lease);
    put_xml_text(b, subj);
    dls_abuf_printf(b, " holder ");
    dls_abuf_xml(b, l->holder.p, l->holder.n);
    if (l->findings & DLS_AUDIT_F_FROM_CHECKPOINT) /* docs/audit.md, starts at a checkpoint */
        dls_abuf_printf(b, ": granted before the audited history (live at its checkpoint)");
    else
        dls_abuf_printf(b, ": granted at pass %" PRIu64, l->granted.pass);
    if (l->due.pass)
        dls_abuf_printf(b, ", due at pass %" PRIu64 " (%s)", l->due.pass,
                        dls_cause_name(l->due_cause));
    if (l->lapsed.pass)
        dls_abuf_printf(b, ", lapsed at pass %" PRIu64 " (%s)", l->lapsed.pass,
                        dls_cause_name(l->lapsed_cause));
    dls_abuf_printf(b, ", %" PRIu64 " renewals (%" PRIu64 " late), verdict %s</title>",
                    l->renewals, l->late_renewals, dls_audit_verdict_name(l->verdict));
}

typedef struct badge {
    size_t row;
    unsigned lane;
    long x;        /* the bar's end, rounded to a pixel */
    size_t bar;    /* index into the sorted bars */
} badge;

static int cmp_badge(const void *x, const void *y)
{
    const badge *p = x, *q = y;
    if (p->row != q->row)
        return p->row < q->row ? -1 : 1;
    if (p->lane != q->lane)
        return p->lane < q->lane ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return p->bar < q->bar ? -1 : p->bar > q->bar;
}

static int cmp_bar_start(const void *x, const void *y)
{
    const bar *p = x, *q = y;
    if (p->row != q->row)
        return p->row < q->row ? -1 : 1;
    if (p->x0 != q->x0)
        return p->x0 < q->x0 ? -1 : 1;
    return p->lease < q->lease ? -1 : p->lease > q->lease;
}

/* The picture's geometry, computed before anything is drawn. */
typedef struct layout {
    const dls_audit *a;
    const dls_audit_svg_settings *s;
    double width, top, bottom, height;
    size_t n_sub, n_bases, group, n_rows;
    bool dense;
    axis *ax;           /* one per basis */
    bar *bars;          /* one per lease, sorted by row then start */
    unsigned *row_lanes;
    double *row_y;
} layout;

static void layout_free(layout *L)
{
    free(L->ax);
    free(L->bars);
    free(L->row_lanes);
    free(L->row_y);
}

/* Rows: subjects in order of first grant, `group` subjects a row when there
 * are more than max_rows. Axes: the plot is shared equally by the bases. */
static int layout_axes(layout *L)
{
    const dls_audit *a = L->a;
    const dls_audit_summary *sum = &a->sum;
    L->width = L->s->width < 600 ? 600 : L->s->width;
    L->n_sub = a->n_subjects;
    L->n_bases = sum->n_bases ? sum->n_bases : 1;
    size_t max_rows = L->s->max_rows ? L->s->max_rows : 1;
    L->group = L->n_sub > max_rows ? (L->n_sub + max_rows - 1) / max_rows : 1;
    L->n_rows = (L->n_sub + L->group - 1) / L->group;
    L->dense = L->group > 1;

    double plot_x = LABEL_W, plot_w = L->width - LABEL_W - RIGHT_M;
    double sec_w = (plot_w - BASIS_GAP * (double)(L->n_bases - 1)) / (double)L->n_bases;
    L->ax = calloc(L->n_bases, sizeof *L->ax);
    L->bars = calloc(a->n_leases ? a->n_leases : 1, sizeof *L->bars);
    L->row_lanes = calloc(L->n_rows ? L->n_rows : 1, sizeof *L->row_lanes);
    L->row_y = calloc(L->n_rows ? L->n_rows : 1, sizeof *L->row_y);
    if (!L->ax || !L->bars || !L->row_lanes || !L->row_y)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < L->n_bases; i++) {
        L->ax[i].x = plot_x + (double)i * (sec_w + BASIS_GAP);
        L->ax[i].w = sec_w;
        if (i < sum->n_bases && sum->bases[i].min_reading <= sum->bases[i].max_reading) {
            L->ax[i].min = sum->bases[i].min_reading;
            L->ax[i].span = sum->bases[i].max_reading - sum->bases[i].min_reading;
        }
    }
    return 0;
}

/* The axis a lease is drawn on: its grant's basis. */
static const axis *lease_axis(const layout *L, const dls_audit_lease *l)
{
    return &L->ax[l->granted.basis < L->n_bases ? l->granted.basis : 0];
}

/* One bar per lease, from grant to lapse (to its basis's last now when
 * live or lapsed on a later basis). */
static void layout_bars(layout *L)
{
    const dls_audit *a = L->a;
    const dls_audit_summary *sum = &a->sum;
    for (size_t i = 0; i < a->n_leases; i++) {
        const audit_lease *al = a->leases[i];
        const dls_audit_lease *l = &al->pub;
        const axis *x = lease_axis(L, l);
        uint64_t end;
        if (l->lapsed.pass && l->lapsed.basis == l->granted.basis)
            end = l->lapsed.reading;
        else if (!l->lapsed.pass && sum->last_mark.basis == l->granted.basis)
            end = sum->last_mark.reading;
        else /* lapsed or live on a later basis: to the end of this basis's axis */
            end = x->min + x->span;
        L->bars[i].lease = i;
        L->bars[i].row = a->subjects[al->subject_ix].order / L->group;
        L->bars[i].x0 = xmap(x, l->granted.reading);
        L->bars[i].x1 = xmap(x, end);
        if (L->bars[i].x1 < L->bars[i].x0 + 2)
            L->bars[i].x1 = L->bars[i].x0 + 2;
    }
}

/* Lanes: within a row, overlapping bars (shared leases, double grants) go
 * to separate lanes; dense rows overlay them. Then each row's height. */
static void layout_lanes(layout *L)
{
    size_t n = L->a->n_leases;
    bar *bars = L->bars;
    double lane_end[MAX_LANES];
    qsort(bars, n, sizeof *bars, cmp_bar_start);
    for (size_t i = 0; i < n;) {
        size_t row = bars[i].row, j = i;
        unsigned used = 1;
        for (int k = 0; k < MAX_LANES; k++)
            lane_end[k] = -1;
        for (; j < n && bars[j].row == row; j++) {
            unsigned lane = 0;
            if (!L->dense) {
                while (lane < MAX_LANES - 1 && lane_end[lane] > bars[j].x0 + 0.01)
                    lane++;
                if (lane_end[lane] < bars[j].x1)
                    lane_end[lane] = bars[j].x1;
            }
            bars[j].lane = lane;
            if (lane + 1 > used)
                used = lane + 1;
        }
        L->row_lanes[row] = used;
        i = j;
    }
    double y = L->top = 118;
    for (size_t r = 0; r < L->n_rows; r++) {
        unsigned lanes = L->row_lanes[r] ? L->row_lanes[r] : 1;
        L->row_y[r] = y;
        y += (double)lanes * (LANE_H + LANE_GAP) + ROW_PAD;
    }
    L->bottom = y + 4;
    L->height = L->bottom + 44;
}

static void draw_header(dls_abuf *b, const layout *L)
{
    const dls_audit *a = L->a;
    const dls_audit_summary *sum = &a->sum;
    dls_abuf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                       "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
                    L->width, L->height, L->width, L->height);
    dls_abuf_printf(b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
                    L->width, L->height);
    dls_abuf_printf(b, "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">");
    put_xml_text(b, L->s->title ? L->s->title : "daolease audit");
    dls_abuf_printf(b, "</text>\n");
    dls_abuf_printf(b, "<text x=\"10\" y=\"38\" font-size=\"11\" class=\"summary\">%zu leases on "
                       "%zu subjects, %" PRIu64 " pass marks; failures: %" PRIu64
                       " unjustified lapse, %" PRIu64 " due mismatch, %" PRIu64
                       " double grant, %" PRIu64 " journal; exit %d</text>\n",
                    a->n_leases, L->n_sub, sum->passes, sum->unjustified_lapse, sum->due_mismatch,
                    sum->double_grant, sum->journal, dls_audit_exit_status(a));
    draw_legend(b, 58);
    if (L->dense)
        dls_abuf_printf(b, "<text x=\"10\" y=\"76\" font-size=\"11\" fill=\"#b71c1c\" "
                           "class=\"note\">%zu subjects: drawn as %zu density rows of up to %zu "
                           "subjects each (bars overlap; failures stay red)</text>\n",
                        L->n_sub, L->n_rows, L->group);
    draw_axes(b, a, L->ax, L->top - 6, L->bottom);
}

static void draw_row_labels(dls_abuf *b, const layout *L)
{
    const dls_audit *a = L->a;
    dls_abuf_printf(b, "<g class=\"rows\" font-size=\"11\">\n");
    for (size_t r = 0; r < L->n_rows; r++) {
        double ly = L->row_y[r] + LANE_H - 2;
        if (r % 2)
            dls_abuf_printf(b, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" "
                               "fill=\"#f7f7f7\"/>\n", L->row_y[r] - 1, L->width,
                            (double)(L->row_lanes[r] ? L->row_lanes[r] : 1) * (LANE_H + LANE_GAP));
        dls_abuf_printf(b, "<text x=\"8\" y=\"%.1f\">", ly);
        if (L->dense) {
            size_t first = r * L->group + 1, last = (r + 1) * L->group;
            if (last > L->n_sub)
                last = L->n_sub;
            dls_abuf_printf(b, "subjects %zu\xe2\x80\x93%zu", first, last);
        } else {
            char subj[64];
            dls_audit_subject_text(a->subjects[r].bytes, a->subjects[r].n, subj, 36);
            put_xml_text(b, subj);
        }
        dls_abuf_printf(b, "</text>\n");
    }
    dls_abuf_printf(b, "</g>\n");
}

/* One lease: its bar, its renewal ticks, its label and its due marker. */
static void draw_lease(dls_abuf *b, const layout *L, const bar *br)
{
    const dls_audit_lease *l = &L->a->leases[br->lease]->pub;
    bool dense = L->dense;
    bool fail = is_failure(l), live = l->verdict == DLS_AUDIT_LIVE || (!l->lapsed.pass);
    bool unver = !fail && (l->findings & DLS_AUDIT_F_UNVERIFIABLE);
    double by = L->row_y[br->row] + (double)br->lane * (LANE_H + LANE_GAP);
    dls_abuf_printf(b, "<g><rect class=\"bar\" data-lease=\"%" PRIu64 "\" x=\"%.1f\" "
                       "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s%s>",
                    l->lease, br->x0, by, br->x1 - br->x0, LANE_H,
                    cause_colour(l->cause, live && !l->cause),
                    unver ? " fill-opacity=\"0.4\"" : dense ? " fill-opacity=\"0.55\"" : "",
                    fail ? " stroke=\"#d32f2f\" stroke-width=\"2\""
                         : unver ? " stroke=\"#212121\" stroke-dasharray=\"3,2\"" : "");
    if (!dense || fail) /* dense pictures keep tooltips for failures only */
        lease_title(b, l);
    dls_abuf_printf(b, "</rect>");
    if (!dense && l->renewal_points) {
        const axis *x = lease_axis(L, l);
        for (uint64_t i = 0; i < l->renewals; i++) {
            const dls_audit_point *p = &l->renewal_points[i];
            if (p->basis != l->granted.basis)
                continue;
            double px = xmap(x, p->reading);
            dls_abuf_printf(b, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"#212121\" stroke-width=\"1.5\"/>",
                            px, by - 1, px, by + LANE_H + 1);
        }
    }
    if (!dense && br->x1 - br->x0 >= 70) {
        char lab[32];
        snprintf(lab, sizeof lab, "%" PRIu64 " ", l->lease);
        dls_abuf_printf(b, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
                           "fill=\"%s\">", br->x0 + 3, by + LANE_H - 3, unver ? "#212121" : "#ffffff");
        put_xml_text(b, lab);
        dls_abuf_xml(b, l->holder.p, l->holder.n > 24 ? 24 : l->holder.n);
        dls_abuf_printf(b, "</text>");
    }
    if (!dense && l->due.pass && l->lapsed.pass && l->due.pass < l->lapsed.pass &&
        l->due.basis == l->granted.basis) {
        double px = xmap(lease_axis(L, l), l->due.reading);
        dls_abuf_printf(b, "<path class=\"due\" d=\"M%.1f %.1fl-4 5h8z\" fill=\"#212121\">"
                           "<title>due at pass %" PRIu64 ", reclaimed at pass %" PRIu64
                           "</title></path>",
                        px, by + LANE_H, l->due.pass, l->lapsed.pass);
    }
    dls_abuf_printf(b, "</g>\n");
}

/* Failures on top of every bar, so a neighbour never hides them; one badge
 * per row and pixel (dense rows stack many leases there). */
static void draw_failures(dls_abuf *b, const layout *L)
{
    const dls_audit *a = L->a;
    const bar *bars = L->bars;
    badge *badges = calloc(a->n_leases ? a->n_leases : 1, sizeof *badges);
    size_t nb = 0;
    if (!badges) {
        b->err = DLS_ERR_NOMEM;
    } else {
        for (size_t k = 0; k < a->n_leases; k++) {
            const dls_audit_lease *l = &a->leases[bars[k].lease]->pub;
            if (is_failure(l))
                badges[nb++] = (badge){bars[k].row, bars[k].lane, (long)(bars[k].x1 + 0.5), k};
        }
        qsort(badges, nb, sizeof *badges, cmp_badge);
    }
    dls_abuf_printf(b, "<g class=\"failures\">\n");
    for (size_t i = 0; i < nb; i++) {
        if (i && badges[i].row == badges[i - 1].row && badges[i].lane == badges[i - 1].lane &&
            badges[i].x == badges[i - 1].x)
            continue;
        const bar *br = &bars[badges[i].bar];
        const dls_audit_lease *l = &a->leases[br->lease]->pub;
        double by = L->row_y[br->row] + (double)br->lane * (LANE_H + LANE_GAP) + LANE_H / 2;
        dls_abuf_printf(b, "<g class=\"failure\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" "
                           "fill=\"#d32f2f\" stroke=\"#ffffff\"/><text x=\"%.1f\" y=\"%.1f\" "
                           "font-size=\"10\" font-weight=\"bold\" fill=\"#ffffff\" "
                           "text-anchor=\"middle\">!</text><title>lease %" PRIu64 ": %s</title></g>\n",
                        br->x1, by, br->x1, by + 3.5, l->lease, dls_audit_verdict_name(l->verdict));
    }
    dls_abuf_printf(b, "</g>\n");
    free(badges);
}

static int render_svg(const dls_audit *a, const dls_audit_svg_settings *s, dls_abuf *b)
{
    layout L;
    memset(&L, 0, sizeof L);
    L.a = a;
    L.s = s;
    if (layout_axes(&L)) {
        layout_free(&L);
        return DLS_ERR_NOMEM;
    }
    layout_bars(&L);
    layout_lanes(&L);
    draw_header(b, &L);
    draw_row_labels(b, &L);
    dls_abuf_printf(b, "<g class=\"leases\">\n");
    for (size_t k = 0; k < a->n_leases; k++)
        draw_lease(b, &L, &L.bars[k]);
    dls_abuf_printf(b, "</g>\n");
    draw_failures(b, &L);
    dls_abuf_printf(b, "<text x=\"10\" y=\"%.1f\" font-size=\"10\" fill=\"#616161\">Readings are "
                       "relative to the smallest pass now on each basis; a live lease runs to "
                       "its basis's last now.</text>\n", L.bottom + 24);
    dls_abuf_printf(b, "</svg>\n");
    layout_free(&L);
    return b->err;
}

int dls_audit_svg(const dls_audit *a, const dls_audit_svg_settings *s, dls_audit_write_fn write,
                  void *user)
{
    if (!a || !write)
        return DLS_ERR_INVAL;
    dls_audit_svg_settings set;
    dls_audit_svg_settings_default(&set);
    if (s)
        set = *s;
    dls_abuf b = {0};
    int rc = render_svg(a, &set, &b);
    if (!rc && b.n)
        rc = write(user, b.p, b.n);
    free(b.p);
    return rc;
}
