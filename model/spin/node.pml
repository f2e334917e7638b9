/*
 * Claim2Core node model (SPIN 6.5.2): the concurrent pieces around the pure core.
 *
 *   Env        the cluster and the kernel: claim allocate/deallocate, task start (TID reuse) and
 *              exit, a coalesced allocate+deallocate, a late (stale) redelivery of an allocate,
 *              and a daemon crash. Bounded by EVENTS so that every run is finite.
 *   core       event handling runs under the core lock (one atomic step): it updates the core's
 *              observed state, re-derives desired D[k], bumps the node generation G and persists it.
 *   Applier    incremental mirror: snapshot a dirty D[k] under the lock, release it, then write
 *              the BPF map under the lock again with compare-and-swap on the generation, then
 *              record the write in A (a crash can fall between the two dependent writes).
 *   Reconciler full pass under the lock: observe the map (A := BPF), Prune (only when not
 *              loading), then Update-all.
 *   Daemon     restart after a crash (volatile state lost; the pinned map, tombstones and the
 *              generation file survive), relist per key while loading, SyncComplete.
 *   Sched      the BPF scheduler: uses an entry only if its start matches the running task's.
 *
 * Keys are TIDs 0..NK-1. A pod and its claim are folded into one claim per key (claim k is
 * reserved for the pod that runs task k); policies are a constant "derive if claim live and
 * task present". Values are (start, generation); the claim generation is ghost lineage.
 *
 * Seeded bugs (each must give a counterexample; see model/CMakeLists.txt):
 *   BUG_BLIND_WRITE            applier writes its snapshot without the generation CAS (stale view)
 *   BUG_PRUNE_WHILE_LOADING    reconciler prunes before the relist finished
 *   BUG_NO_START_CHECK         scheduler uses an entry whatever its start (INV-2)
 *   BUG_GEN_RESET_ON_RESTART   restart starts the generation from 0 (INV-4)
 *   BUG_PERSIST_AFTER_WRITE    generation persisted only after the BPF write (crash in between)
 *   BUG_ACCEPT_OLDER_GEN       core accepts an allocate at or below the tombstone (INV-3)
 *   BUG_MISSED_DEALLOC         coalesced allocate+deallocate delivered edge-triggered: only the
 *                              allocate reaches the core (missed event)
 *   BUG_RESURRECT_ON_RESTART   restart keeps the observed claims and tasks (INV-7)
 *   BUG_NO_OBSERVE             reconciler plans against its own record instead of the map (INV-5)
 *   BUG_LOADING_STUCK          SyncComplete never happens: deferred deletes never run (ESR)
 *   BUG_FORGET_DEALLOC         a deallocation does not re-derive the claim's entry (INV-1)
 *   BUG_SKIP_PRUNE             entries D does not explain are never deleted (INV-5)
 *   BUG_RELIST_SAME_GEN_DEAD   a claim relisted after a restart at a generation the core had taken
 *                              before stays dead (INV-7, restart completeness)
 */

/* Names used by tests/mutants/mutants.tsv for the same bugs. */
#ifdef BUG_ACCEPT_OLD_GEN
#define BUG_ACCEPT_OLDER_GEN
#endif

#ifndef NK
#define NK 2
#endif
#ifndef EVENTS
#define EVENTS 4
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#define MAXCG 2     /* claim generations per key */
#define MAXSTART 2  /* task starts per key (2 = one TID reuse) */

/* Names that show up in pan's "assertion violated" line, so a test can tell which invariant
 * failed. Hidden: not part of the state vector. */
hidden byte INV1 = 1; hidden byte INV2 = 1; hidden byte INV3 = 1; hidden byte INV4 = 1;
hidden byte INV5 = 1; hidden byte INV7 = 1;

/* ---- ground truth: cluster and kernel ---- */
bool t_live[NK];     /* claim k allocated */
byte t_cgen[NK];     /* claim k's generation */
byte t_start[NK];    /* start of the task running as TID k, 0 = none */
byte t_last[NK];     /* last start used for TID k (a new task always gets a new start) */

/* ---- core: observed state (volatile) ---- */
bool c_live[NK]; byte c_cgen[NK]; byte c_start[NK];
bool listed[NK];     /* relisted since the last restart */

/* ---- core: durable state ---- */
byte tomb[NK];       /* tombstone: highest deallocated claim generation */
byte G;              /* node generation (volatile copy) */
byte G_file;         /* generation file */
#ifdef BUG_RELIST_SAME_GEN_DEAD
byte seen[NK];       /* durable: highest claim generation taken (only the seeded bug reads it) */
#endif

/* ---- core: desired table D (volatile); d_start 0 = absent; d_gen = generation of last change */
byte d_start[NK]; byte d_cgen[NK]; byte d_gen[NK];

/* ---- core's view of the actual map A (volatile) ---- */
byte a_start[NK]; byte a_gen[NK];

/* ---- the pinned BPF map (survives restarts); b_cgen is ghost lineage ---- */
byte b_start[NK]; byte b_gen[NK]; byte b_cgen[NK];

bool up = 1;
bool loading = 0;
byte epoch = 0;       /* bumps on restart: a crashed thread's snapshot dies with it */
byte restart_gen = 0; /* G right after the last restart */

/* ---- ghosts ---- */
byte max_gen = 0;     /* largest generation ever assigned, across restarts */
byte b_last[NK];      /* generation of the last BPF op on each key */
bool env_done = 0;

#define VALID(k, s, cg) (t_live[k] && t_cgen[k] == (cg) && t_start[k] == (s))
#define KEY_SYNCED(k) (b_start[k] == d_start[k] && (d_start[k] == 0 || b_gen[k] == d_gen[k]))
#if NK > 2
#define ALL_LISTED (listed[0] && listed[1] && listed[2])
#define SYNCED (up && !loading && KEY_SYNCED(0) && KEY_SYNCED(1) && KEY_SYNCED(2))
#else
#define ALL_LISTED (listed[0] && listed[1])
#define SYNCED (up && !loading && KEY_SYNCED(0) && KEY_SYNCED(1))
#endif

/* INV-4: every generation is new, also across restarts. Write-ahead: the generation file holds G
 * before anything derived at G can reach the map. */
inline bump() {
  G++;
  assert(INV4 && G > max_gen);
  max_gen = G;
#ifndef BUG_PERSIST_AFTER_WRITE
  G_file = G
#endif
}

/* Re-derive D[k] from the observed state; a change gets generation G. */
inline rederive(k) {
  if
  :: c_live[k] && c_start[k] != 0 -> ns = c_start[k]; ncg = c_cgen[k]
  :: else -> ns = 0; ncg = 0
  fi;
  if
  :: ns != d_start[k] || ncg != d_cgen[k] ->
     bump(); d_start[k] = ns; d_cgen[k] = ncg; d_gen[k] = G
  :: else -> skip
  fi
}

/* ClaimAllocated/ClaimUpdated: ignored at or below the tombstone or below the current (INV-3). */
inline core_alloc(k, g) {
  if
#ifndef BUG_ACCEPT_OLDER_GEN
  :: g <= tomb[k] || g < c_cgen[k] -> skip
#endif
  :: else -> c_live[k] = 1; c_cgen[k] = g; rederive(k)
#ifdef BUG_RELIST_SAME_GEN_DEAD
     ; if :: g > seen[k] -> seen[k] = g :: else -> skip fi
#endif
  fi
}

inline core_dealloc(k, g) {
  if :: g > tomb[k] -> tomb[k] = g :: else -> skip fi;
  if :: c_cgen[k] <= g -> c_live[k] = 0 :: else -> skip fi;
#ifndef BUG_FORGET_DEALLOC
  rederive(k)
#else
  skip
#endif
}

inline core_task(k, s) {
  c_start[k] = s;
  rederive(k)
}

/* An event reaches the core when the daemon is up and the key is not waiting for its relist. */
#define DELIVER(k) (up && (!loading || listed[k]))

/* One BPF map operation (s = 0: delete) at generation g. */
inline bpf_op(k, s, cg, g) {
  /* INV-3: the map never goes back to an older generation of a key */
  assert(INV3 && g >= b_last[k]);
  if
  :: s != 0 ->
     /* INV-1, INV-2: what is written is derived from a live claim and the running task */
     assert(INV1 && VALID(k, s, cg));
     b_start[k] = s; b_cgen[k] = cg; b_gen[k] = g
  :: else -> b_start[k] = 0; b_cgen[k] = 0; b_gen[k] = 0
  fi;
  b_last[k] = g
}

proctype Env() {
  byte n = 0, k, ns, ncg;
  byte crashes = 0;
  do
  :: n < EVENTS ->
     atomic {
       select (k : 0 .. NK - 1);
       if
       :: !t_live[k] && t_cgen[k] < MAXCG ->            /* allocate */
          t_cgen[k]++; t_live[k] = 1;
          if :: DELIVER(k) -> core_alloc(k, t_cgen[k]) :: else -> skip fi
       :: t_live[k] ->                                   /* deallocate */
          t_live[k] = 0;
          if :: DELIVER(k) -> core_dealloc(k, t_cgen[k]) :: else -> skip fi
       :: t_last[k] < MAXSTART ->                        /* new task as TID k (TID reuse) */
          t_last[k]++; t_start[k] = t_last[k];
          if :: DELIVER(k) -> core_task(k, t_start[k]) :: else -> skip fi
       :: t_start[k] != 0 ->                             /* task exit */
          t_start[k] = 0;
          if :: DELIVER(k) -> core_task(k, 0) :: else -> skip fi
       :: !t_live[k] && t_cgen[k] < MAXCG ->            /* allocate+deallocate coalesced */
          t_cgen[k]++;
          if
          :: DELIVER(k) ->
#ifdef BUG_MISSED_DEALLOC
             core_alloc(k, t_cgen[k])
#else
             core_dealloc(k, t_cgen[k])  /* level-triggered: the final state, deallocated */
#endif
          :: else -> skip
          fi
       :: !t_live[k] && t_cgen[k] > 0 && tomb[k] == t_cgen[k] && DELIVER(k) ->
          core_alloc(k, t_cgen[k])                       /* late redelivery of an old allocate */
       :: else -> skip                                   /* nothing left to do for this key */
       fi;
       n++
     }
  :: n < EVENTS && crashes < CRASHES && up ->
     atomic { up = 0; crashes++; n++ }
  :: n >= EVENTS -> break
  od;
  env_done = 1
}

inline restart() {
  epoch++;
  for (i : 0 .. NK - 1) {
#ifndef BUG_RESURRECT_ON_RESTART
    c_live[i] = 0; c_cgen[i] = 0; c_start[i] = 0;
#endif
    listed[i] = 0;
    d_start[i] = 0; d_cgen[i] = 0;
#ifdef BUG_NO_OBSERVE
    a_start[i] = 0; a_gen[i] = 0
#else
    a_start[i] = b_start[i]; a_gen[i] = b_gen[i]  /* BpfObserved at startup */
#endif
  };
#ifdef BUG_GEN_RESET_ON_RESTART
  G = 0;
#else
  G = G_file;
#endif
  bump();
  for (i : 0 .. NK - 1) { d_gen[i] = G };
  restart_gen = G;
  loading = 1;
  up = 1
}

/* Relist key k: the list holds only what exists now (a claim deleted while down is simply not
 * in it), delivered through the same handlers as live events. */
inline relist(k) {
  listed[k] = 1;
#ifdef BUG_RELIST_SAME_GEN_DEAD
  /* the restarted core takes a relisted claim at a generation it had seen as already handled */
  if :: t_live[k] && t_cgen[k] > seen[k] -> core_alloc(k, t_cgen[k]) :: else -> skip fi;
#else
  if :: t_live[k] -> core_alloc(k, t_cgen[k]) :: else -> skip fi;
#endif
  core_task(k, t_start[k])
}

/* INV-7, second half (restart completeness): once every key is relisted after a restart, the
 * desired table is the one derived from scratch from the world as it is now: an entry exactly
 * for each live claim whose task runs, at that claim's generation and that task's start. */
inline check_complete() {
  for (i : 0 .. NK - 1) {
    assert(INV7 && d_start[i] == (t_live[i] && t_start[i] != 0 -> t_start[i] : 0) &&
           (d_start[i] == 0 || d_cgen[i] == t_cgen[i]))
  }
}

proctype Daemon() {
  byte i, ns, ncg;
  do
  :: atomic { !up -> restart() }
  :: atomic { up && loading && !listed[0] -> relist(0) }
  :: atomic { up && loading && !listed[1] -> relist(1) }
#if NK > 2
  :: atomic { up && loading && !listed[2] -> relist(2) }
#endif
#ifndef BUG_LOADING_STUCK
  :: atomic { up && loading && ALL_LISTED -> loading = 0; check_complete() }  /* SyncComplete */
#endif
  od
}

/* Dirty: the core's view of the map differs from D; deletes are deferred while loading. */
#ifdef BUG_SKIP_PRUNE
#define MAY_DELETE 0
#else
#define MAY_DELETE (!loading)
#endif
#define DIRTY(k) ((d_start[k] != a_start[k] || (d_start[k] != 0 && d_gen[k] != a_gen[k])) \
                  && (d_start[k] != 0 || MAY_DELETE))

proctype Applier() {
  byte k, s_start, s_cgen, s_gen, s_epoch;
  bool wrote;
  do
  :: atomic {
       up;
       if
       :: DIRTY(0) -> k = 0
       :: DIRTY(1) -> k = 1
#if NK > 2
       :: DIRTY(2) -> k = 2
#endif
       fi;
       s_start = d_start[k]; s_cgen = d_cgen[k]; s_gen = d_gen[k]; s_epoch = epoch
     }
     /* lock released: events, the reconciler and a crash can run here (stale view) */
     atomic {
       if
#ifdef BUG_BLIND_WRITE
       :: up && s_epoch == epoch ->
#else
       :: up && s_epoch == epoch && d_gen[k] == s_gen ->  /* compare-and-swap on the generation */
#endif
          bpf_op(k, s_start, s_cgen, s_gen); wrote = 1
       :: else -> wrote = 0  /* CAS lost or the thread died: the key stays dirty */
       fi
     };
     /* Second dependent write: record the map write in the core's view A. A crash in between
      * leaves the map ahead of A; the restart re-reads the map (BpfObserved). */
     atomic {
       if
       :: wrote && up && s_epoch == epoch -> a_start[k] = s_start; a_gen[k] = s_gen
       :: else -> skip
       fi;
       wrote = 0
     }
#ifdef BUG_PERSIST_AFTER_WRITE
     ; atomic { up && s_epoch == epoch && G_file < s_gen -> G_file = s_gen }
#endif
  od
}

#ifdef BUG_SKIP_PRUNE
#define PRUNE_OK 0
#else
#define PRUNE_OK 1
#endif
inline full_pass() {
  for (i : 0 .. NK - 1) {
#ifndef BUG_NO_OBSERVE
    a_start[i] = b_start[i]; a_gen[i] = b_gen[i]         /* BpfObserved */
#else
    skip
#endif
  };
#ifndef BUG_PRUNE_WHILE_LOADING
  if :: !loading ->
#endif
    for (i : 0 .. NK - 1) {                              /* Prune */
      if
      :: a_start[i] != 0 && d_start[i] == 0 && PRUNE_OK ->
         /* INV-7 loading window: only an unexplained entry may be pruned */
         assert(INV7 && !VALID(i, b_start[i], b_cgen[i]));
         bpf_op(i, 0, 0, d_gen[i]); a_start[i] = 0
      :: else -> skip
      fi
    }
#ifndef BUG_PRUNE_WHILE_LOADING
  :: else -> skip
  fi;
#endif
  for (i : 0 .. NK - 1) {                                /* Update-all */
    if
    :: d_start[i] != 0 && (d_start[i] != a_start[i] || d_gen[i] != a_gen[i]) ->
       bpf_op(i, d_start[i], d_cgen[i], d_gen[i]); a_start[i] = d_start[i]; a_gen[i] = d_gen[i]
    :: else -> skip
    fi
  };
  if
  :: !loading ->
     for (i : 0 .. NK - 1) {
       /* INV-5: after a full pass every entry is explained by D (nothing unexplained is left) */
       assert(INV5 && KEY_SYNCED(i));
       /* INV-7: nothing derived before the last restart survives it */
       assert(INV7 && (b_start[i] == 0 || b_gen[i] > restart_gen || epoch == 0))
     }
  :: else -> skip
  fi
}

proctype Reconciler() {
  byte i;
  do
  :: atomic { up && !SYNCED -> full_pass() }
  od
}

/* The scheduler runs task k and looks up the policy map by TID. */
proctype Sched() {
  byte k;
  do
  :: atomic {
       select (k : 0 .. NK - 1);
       if
#ifdef BUG_NO_START_CHECK
       :: t_start[k] != 0 && b_start[k] != 0 ->
#else
       :: t_start[k] != 0 && b_start[k] != 0 && b_start[k] == t_start[k] ->
#endif
          /* INV-2: the policy used belongs to this task, not to an earlier owner of the TID */
          assert(INV2 && b_start[k] == t_start[k])
       :: else -> skip  /* no entry or identity mismatch: the default path */
       fi
     }
  od
}

init {
  atomic {
    run Env(); run Daemon(); run Applier(); run Reconciler(); run Sched()
  }
}

/* Eventually stable reconciliation: once the environment stops, the map converges to D and
 * stays there. Checked with ./pan -a -f -N esr (weak fairness). */
ltl esr { [] (([] env_done) -> (<> [] SYNCED)) }
