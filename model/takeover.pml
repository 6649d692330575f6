/* Standby-judge takeover (judge.md, "Standby judges and takeover (revision 5)";
 * holder.md, the bound counts only renewals confirmed by a pass mark).
 * Bounds: 1 exclusive subject, 2 holders (H1 then H2 after a reclaim),
 * 1 lease on H1, ticks 0..TMAX, journal of at most JMAX records,
 * 2 judges (1 active, 2 standby). Ticks are data advanced by proc Tick.
 * Planted bugs: -DBUG_NO_FENCE (standby appends without fencing),
 * -DBUG_UNCONFIRMED (H1 counts an acknowledged, unconfirmed renewal),
 * -DBUG_NO_RECLAIM (the standby keeps following a journal whose judge
 * died: it never takes over), -DBUG_RECLAIM_UNMARKED (a judge reclaims
 * whatever its mark's append answered: a fenced-out judge, or a full
 * journal, reclaims a lease no landed mark lists as due; P3).
 * P1-P3 are assertions. P4 (liveness, -DP4): an LTL property checked for
 * acceptance cycles under weak fairness (pan -a -f; judge.md, Standby
 * judges: a dead holder's lease is reclaimed at the same reading with or
 * without a takeover). */
#define TMAX 5
#define D 2
#define JMAX 8
byte now = 0;
byte jlen = 0;
byte jby[JMAX];            /* which judge wrote each landed record */
bool jdue[JMAX];           /* record is a mark listing the lease as due */
byte writer = 1;           /* fence: the writer role */
bool marked = false;       /* a landed mark lists the lease */
bool reclaimed = false;
byte conf_exp = D;         /* expiry confirmed by landed marks */
byte med_ren = 0;          /* newest renewal the medium holds (tick) */
byte h1_own_exp = D;       /* what H1 believes without confirmation */
bool h1_dead = false;
#ifdef P4
bool a_dead = false;       /* the active judge's process ended: its lock is free */
#endif
byte h1_last = 255;        /* newest tick H1 acted at */
byte h2_from = 255;        /* first tick H2 acted at */
#ifdef BUG_UNCONFIRMED
#define BOUND h1_own_exp
#else
#define BOUND conf_exp
#endif

#ifdef P4
/* For P4 a pass with nothing new appends nothing (judge.md, Journal;
 * heartbeat marks left out): quiet marks would fill the bounded journal,
 * which a real journal never is. The safety runs keep them. */
#define QUIET (med_ren + D > conf_exp)
/* P4: once H1 is dead and its lease falls due within the modelled ticks
 * (its newest renewal the medium holds + D <= TMAX; Tick reaches TMAX under
 * weak fairness), the lease is eventually reclaimed. */
#define dead_due (h1_dead && med_ren + D <= TMAX)
ltl p4 { [] (dead_due -> <> reclaimed) }
#else
#define QUIET true
#endif

inline append(j, rp, due) {
  atomic {
#ifndef BUG_NO_FENCE
    if :: writer != j -> ok = false :: else -> skip fi;
#endif
    if :: jlen >= JMAX -> ok = false :: else -> skip fi;
    if :: ok ->
    /* P2: nothing another judge wrote landed after this judge's read point */
    k = rp; do :: k < jlen -> assert(jby[k] == j); k++ :: else -> break od;
    jby[jlen] = j; jdue[jlen] = due; jlen++; rp = jlen;
    if :: due -> marked = true :: else -> skip fi
    :: else -> skip fi
  }
}

inline pass(j, rp) {
  /* The pass: confirm renewals the medium holds, then mark, then reclaim */
  if
  :: atomic { !reclaimed && med_ren + D > now && QUIET } ->
       append(j, rp, false); if :: ok -> conf_exp = med_ren + D :: else -> skip fi
  :: atomic { !reclaimed && med_ren + D <= now } ->
       append(j, rp, true);
#ifdef BUG_RECLAIM_UNMARKED
       atomic { assert(marked); reclaimed = true }
#else
       if :: ok -> atomic { assert(marked); reclaimed = true } :: else -> skip fi  /* P3 */
#endif
  :: else -> skip
  fi
}

active proctype Tick() { do :: now < TMAX -> now++ :: else -> break od }

active proctype H1() {
  do
  :: atomic { (!h1_dead && now < BOUND) ->            /* H1 acts at now */
       assert(h2_from == 255 || now < h2_from); h1_last = now }   /* P1 */
  :: atomic { (!h1_dead && now < BOUND && now > med_ren) ->
       h1_own_exp = now + D;
       if :: med_ren = now :: skip fi }               /* medium may lose it */
  :: h1_dead = true; break
  od
}

active proctype H2() {
end: do :: atomic { reclaimed ->                      /* H2 acts at now */
       if :: h2_from == 255 -> h2_from = now :: else -> skip fi;
       assert(h1_last == 255 || h1_last < now) }      /* P1 */
  od
}

active proctype Active() {
  byte rp = 0, k; bool ok = true;
  do :: ok -> pass(1, rp) :: break od   /* may stall (stale), then wake */
#ifdef P4
  a_dead = true                         /* ends: the kernel frees its lock */
#endif
}

active proctype Standby() {
  byte rp = 0, k; bool ok = true;
  /* following; it may presume a live judge abandoned (a remote journal's
   * takeover_after) at any step. For P4 it also takes over at the latest
   * once the judge is dead (a file journal's lock freed: its next step
   * obtains it); weak fairness alone would let it follow for ever. The
   * safety runs leave that out (they allow more, never less). */
#if defined(BUG_NO_RECLAIM)
  do :: rp = jlen od;
#elif defined(P4)
  do :: !a_dead -> rp = jlen :: break od;
#else
  do :: rp = jlen :: break od;
#endif
#ifndef BUG_NO_FENCE
  writer = 2; rp = jlen;           /* fence first, then read to the end */
#endif
  do :: ok && !reclaimed -> pass(2, rp) :: else -> break od
}
