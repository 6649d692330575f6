/* The holder's pure arithmetic: the bound, the renewal schedule and the
 * sizing relations of holder.md. No clock, no media. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "holder/holder_int.h"
#include "vocab/where.h"

uint64_t dls_holder_bound_of(uint64_t observed, bool renewed, uint64_t last_renewal,
                             uint64_t duration_ns, bool has_max, uint64_t max_ns)
{
    uint64_t base = (renewed && last_renewal > observed) ? last_renewal : observed;
    uint64_t bound = dls_add_sat(base, duration_ns);
    if (has_max) {
        uint64_t cap = dls_add_sat(observed, max_ns);
        if (cap < bound)
            bound = cap;
    }
    return bound;
}

uint64_t dls_holder_due_of(uint64_t observed, bool renewed, uint64_t last_renewal,
                           uint64_t interval_ns)
{
    uint64_t base = (renewed && last_renewal > observed) ? last_renewal : observed;
    return dls_add_sat(base, interval_ns);
}

void dls_holder_fmt_ns(char *buf, size_t cap, uint64_t ns)
{
    static const struct {
        const char *name;
        uint64_t ns;
    } units[] = {{"h", 3600 * DLS_NS_PER_S}, {"min", 60 * DLS_NS_PER_S},
                 {"s", DLS_NS_PER_S},        {"ms", DLS_NS_PER_MS},
                 {"us", DLS_NS_PER_US},      {"ns", 1}};
    if (!buf || cap == 0)
        return;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (ns != 0 && ns % units[i].ns != 0)
            continue;
        if (ns == 0 && units[i].ns != 1)
            continue;
        snprintf(buf, cap, "%" PRIu64 " %s", ns / units[i].ns, units[i].name);
        return;
    }
}

/* Relation 2 in exact integers: a < d/2  <=>  2a < d  <=>  a <= (d-1)/2. */
static bool below_half(uint64_t a, uint64_t d)
{
    return d >= 1 && a <= (d - 1) / 2;
}

uint64_t dls_holder_interval_for(const dls_holder_settings *s, uint64_t duration_ns)
{
    uint64_t third = duration_ns / 3;
    if (!s || s->renew_interval_ns == 0)
        return third;
    uint64_t with_tick = dls_add_sat(s->renew_interval_ns, s->tick_period_ns);
    if (below_half(with_tick, duration_ns))
        return s->renew_interval_ns;
    return third;
}

/* ppm × x / 10^6 rounded up, saturating, without 128-bit arithmetic. */
static uint64_t skew_term(uint32_t ppm, uint64_t x)
{
    uint64_t q = x / 1000000u, r = x % 1000000u;
    uint64_t hi;
    if (ppm != 0 && q > UINT64_MAX / ppm)
        return UINT64_MAX;
    hi = q * ppm;
    uint64_t lo = (r * ppm + 999999u) / 1000000u; /* r * ppm < 10^6 · 2^32 */
    return dls_add_sat(hi, lo);
}

uint64_t dls_holder_tolerance_needed(const dls_holder_tolerance *t,
                                     uint64_t holder_tick_ns, uint64_t duration_ns,
                                     uint64_t max_ns)
{
    if (!t)
        return 0;
    uint64_t need = dls_add_sat(t->grant_flight_ns, t->renewal_flight_ns);
    need = dls_add_sat(need, t->judge_tick_ns);
    need = dls_add_sat(need, holder_tick_ns);
    uint64_t longest = max_ns > duration_ns ? max_ns : duration_ns;
    return dls_add_sat(need, skew_term(t->skew_ppm, longest));
}

#define F(var, ns)                                                            \
    char var[40];                                                             \
    dls_holder_fmt_ns(var, sizeof var, (ns))

static int check_relations(const dls_holder_settings *s, uint64_t d, char *msg,
                           size_t cap)
{
    uint64_t interval = s->renew_interval_ns ? s->renew_interval_ns : d / 3;
    const char *which = s->renew_interval_ns ? "configured" : "default (a third)";
    F(dd, d);
    F(ii, interval);
    if (!below_half(interval, d)) {
        if (msg)
            snprintf(msg, cap,
                     "sizing: the duration %s does not exceed twice the %s renewal "
                     "interval %s (holder.md: duration > 2 x interval)",
                     dd, which, ii);
        return DLS_ERR_SIZING;
    }
    uint64_t sum = dls_add_sat(interval, s->tick_period_ns);
    if (!below_half(sum, d)) {
        F(tt, s->tick_period_ns);
        F(ss, sum);
        if (msg)
            snprintf(msg, cap,
                     "sizing: the %s renewal interval %s plus the tick period %s is "
                     "%s, not below half the duration %s (holder.md: interval + "
                     "tick period < duration / 2)",
                     which, ii, tt, ss, dd);
        return DLS_ERR_SIZING;
    }
    return 0;
}

static int check_tolerance(const dls_holder_settings *s, uint64_t d, uint64_t max,
                           char *msg, size_t cap)
{
    const dls_holder_tolerance *t = &s->tolerance;
    if (!t->declared)
        return 0;
    uint64_t need = dls_holder_tolerance_needed(t, s->tick_period_ns, d, max);
    if (need <= t->tolerance_ns)
        return 0;
    F(tol, t->tolerance_ns);
    F(nn, need);
    F(gf, t->grant_flight_ns);
    F(rf, t->renewal_flight_ns);
    F(jt, t->judge_tick_ns);
    F(ht, s->tick_period_ns);
    F(ll, max > d ? max : d);
    if (msg)
        snprintf(msg, cap,
                 "sizing: the judge's tolerance %s does not cover %s = grant flight "
                 "%s + renewal flight %s + judge tick %s + holder tick %s + skew "
                 "%" PRIu32 " ppm of %s",
                 tol, nn, gf, rf, jt, ht, t->skew_ppm, ll);
    return DLS_ERR_SIZING;
}

static int check_retention(const dls_holder_settings *s, bool evicts, char *msg,
                           size_t cap)
{
    if (!evicts || s->retention_ns == 0 || s->judge_lag_ns == 0)
        return 0;
    if (s->retention_ns > s->judge_lag_ns)
        return 0;
    F(rr, s->retention_ns);
    F(ll, s->judge_lag_ns);
    if (msg)
        snprintf(msg, cap,
                 "sizing: the retention window %s of the holder's medium does not "
                 "exceed the judge's lag %s (cadence + drain time): renewals could "
                 "be evicted before the judge reads them",
                 rr, ll);
    return DLS_ERR_SIZING;
}

/* Relation 5 (holder.md rev 4): a renewal is confirmed before the bound of
 * the one before it — interval + judge lag (cadence + drain) + journal read
 * lag + one holder tick period < duration. A warning, never a refusal. */
static int check_confirmation(const dls_holder_settings *s, uint64_t d, char *msg,
                              size_t cap)
{
    uint64_t interval = dls_holder_interval_for(s, d);
    uint64_t sum = dls_add_sat(interval, s->judge_lag_ns);
    sum = dls_add_sat(sum, s->journal_lag_ns);
    sum = dls_add_sat(sum, s->tick_period_ns);
    if (sum < d)
        return 0;
    F(ii, interval);
    F(jl, s->judge_lag_ns);
    F(rl, s->journal_lag_ns);
    F(tt, s->tick_period_ns);
    F(ss, sum);
    F(dd, d);
    if (msg)
        snprintf(msg, cap,
                 "sizing: the renewal interval %s + the judge's lag %s + the journal's "
                 "read lag %s + the tick period %s is %s, not below the duration %s: a "
                 "renewal may not be confirmed before the bound of the one before it "
                 "(holder.md rev 4)",
                 ii, jl, rl, tt, ss, dd);
    return DLS_ERR_SIZING;
}

/* The relations in order; *rel names the first that fails (1-5). */
static int sizing(const dls_holder_settings *s, uint64_t duration_ns, uint64_t max_ns,
                  bool evicts, char *msg, size_t cap, int *rel)
{
    if (msg && cap > 0)
        msg[0] = '\0';
    if (!msg)
        cap = 0;
    *rel = 0;
    if (!s)
        return DLS_ERR_INVAL;
    int rc;
    if (duration_ns != 0 && (rc = check_relations(s, duration_ns, msg, cap)) != 0) {
        uint64_t interval = s->renew_interval_ns ? s->renew_interval_ns : duration_ns / 3;
        *rel = below_half(interval, duration_ns) ? 2 : 1;
        return rc;
    }
    *rel = 3;
    if ((rc = check_tolerance(s, duration_ns, max_ns, msg, cap)) != 0)
        return rc;
    *rel = 4;
    if ((rc = check_retention(s, evicts, msg, cap)) != 0)
        return rc;
    *rel = 5;
    if (duration_ns != 0 && (rc = check_confirmation(s, duration_ns, msg, cap)) != 0)
        return rc;
    *rel = 0;
    return 0;
}

static const char *const relation_reason[] = {
    NULL,
    "sizing: the duration does not exceed twice the renewal interval",
    "sizing: the renewal interval plus one tick period is not below half the duration",
    "sizing: the judge's tolerance does not cover the grant's and the renewal's "
    "flights, both tick periods and the rate skew",
    "sizing: the retention window of the holder's medium does not exceed the "
    "judge's lag",
    "sizing: the renewal interval plus the judge's lag, the journal's read lag and "
    "one tick period is not below the duration (a renewal may be confirmed too late)",
};

int dls_holder_sizing_check(const dls_holder_settings *s, uint64_t duration_ns,
                            uint64_t max_ns, bool evicts, dls_where *w)
{
    int rel;
    int rc = sizing(s, duration_ns, max_ns, evicts, NULL, 0, &rel);
    if (rc == DLS_ERR_INVAL)
        return dls_where_fill(w, rc, (dls_where){.reason = "sizing: no settings"});
    if (rc != 0)
        return dls_where_fill(w, rc, (dls_where){.rule = rel, .reason = relation_reason[rel]});
    return dls_where_fill(w, 0, (dls_where){0});
}

int dls_holder_sizing_explain(const dls_holder_settings *s, uint64_t duration_ns,
                              uint64_t max_ns, bool evicts, char *buf, size_t cap)
{
    int rel;
    return sizing(s, duration_ns, max_ns, evicts, buf, cap, &rel);
}

int hld_sizing_text(const dls_holder_settings *s, uint64_t duration_ns, uint64_t max_ns,
                    bool evicts, char *buf, size_t cap, int *relation)
{
    return sizing(s, duration_ns, max_ns, evicts, buf, cap, relation);
}
