/* tier.h: tiered compilation on the CPU (tier.c).
 *
 * A first call whose optimised build is in no cache tier runs tier 0 (libtcc,
 * in process, milliseconds) and queues the optimising build; when it is
 * loaded, its module is stored into the entry's code pointer (release), so
 * the next launch (which reads it once, acquire) runs it. */
#ifndef KILN_EXT_TIER_H
#define KILN_EXT_TIER_H

#include "state.h"

typedef struct ExtTierJob ExtTierJob;
typedef struct ExtTiers ExtTiers;

/* Module init: the tiers' locks and lists (st->tiers).  0, or -1 with an
 * exception set. */
int ext_tier_init(ModState *st);

/* Tier 0: kiln_cpu_quick_load under the module's libtcc lock, with the GIL
 * released.  NULL when tier 0 refuses the source (counted, and the reason
 * kept, in tier_stats); with TIER0_RAISE the refusal is a kiln.CompileError,
 * else no exception is set and the caller builds with the C compiler.  TIER0_VECTOR:
 * the vector entry's source, whose refusal is counted apart (the caller tries the
 * scalar entry next). */
enum { TIER0_QUIET, TIER0_RAISE, TIER0_VECTOR };
kiln_cpu_module *ext_tier0_load(ModState *st, const char *src, size_t len, const char *entry,
                                int mode);

/* Queues the optimising build of src: through the cache (target NULL skips
 * it), by the C compiler of ctx (the job takes ctx over), on a worker thread.
 * When the module is loaded, *slot gets it (an atomic release store) unless
 * ext_tier_detach came first.  With the GIL.  NULL (ctx freed) when no build
 * can be queued (no thread, the interpreter exiting): the caller builds now. */
ExtTierJob *ext_tier_start(ModState *st, kiln_ctx *ctx, const char *src, size_t len,
                           const char *target, const char *name, const char *entry,
                           kiln_cpu_module **slot);

/* A launch about to run tier-0 code (the launch's slow path, with the GIL):
 * a build that a fork cut off (this is the child) is queued again, or built
 * now when no worker can start; a launch of grid x block threads expected to
 * run longer on tier 0 than KILN_TIER0_BUDGET_MS (from the entry's last tier-0
 * launch, else a guess) waits for the optimised build; a failed build is
 * reported once, as kiln.PerformanceWarning.  j may be NULL (tier 0 only).
 * The caller reads the entry's code pointer again after it.  0, or -1 with
 * an exception set (Ctrl-C in the wait, or the warning made an error). */
int ext_tier_poll(ModState *st, ExtTierJob *j, int nt, const int64_t grid[3],
                  const int64_t block[3]);
/* Tier 0 runs the vector entry (emit_tier0.c): the guess before the first launch is
 * its own (with the GIL, before the first launch). */
void ext_tier_vector(ExtTierJob *j, bool vector);
/* The threads a tier-0 launch of m runs on (kiln_cpu_quick_threads), when it is
 * expected to take KILN_TIER0_POOL_MIN_US or longer on one; else 1; one fewer after
 * the entry's first launch while its optimising build runs.  ext_tier_poll divides
 * its expectation by them. */
int ext_tier_threads(ModState *st, const ExtTierJob *j, const kiln_cpu_module *m,
                     const int64_t grid[3], const int64_t block[3]);
/* Times a tier-0 launch on nt threads: t0 = ext_tier_clock() before, ext_tier_ran
 * after (the entry's time per grid position on one thread, for the next). */
double ext_tier_clock(void);
void ext_tier_ran(ModState *st, ExtTierJob *j, int nt, const int64_t grid[3],
                  const int64_t block[3], double t0);

/* The entry that owns *slot is going away (entry_dealloc, with the GIL): the
 * job never writes the slot after this returns. */
void ext_tier_detach(ModState *st, ExtTierJob *j);

/* Interpreter exit and module teardown: the queued and running builds get
 * KILN_TIER_EXIT_MS to finish and be stored, then are cancelled (their
 * compilers killed); waits for the workers.  With the GIL.  0 when no worker
 * is left, else -1 (the caller must not free what workers use). */
int ext_tier_shutdown(ModState *st);

extern PyMethodDef ext_tier_functions[];

#endif
