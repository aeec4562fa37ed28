/* rt_blocks.h: CUDA blocks on the CPU, for kernels with shared memory or barriers.
 *
 * Embedded after rt_cpu.h and rt_common.h in the C of a kernel that uses
 * kiln.shared.array, syncthreads or syncwarp (SemaResult.block_mode).  Such a
 * kernel cannot run its threads one after another: a thread waiting at a barrier
 * needs every other thread of its block to get there first.  So each thread of
 * a block is a fiber, a stack of its own and a saved stack pointer, and one
 * OpenMP thread runs a block's fibers in turns: a pass runs each fiber that can
 * run until it parks (at a barrier or a warp operation) or ends.  After a pass the
 * fibers parked at a warp operation go on first, each warp's lanes together (they
 * have all written their words by then); only when no fiber can run and none
 * waits for its warp, the fibers parked at syncthreads() go on, which is what a
 * block barrier promises: a warp that shuffles inside a branch the other warps
 * skip finishes before they pass the next syncthreads(), as on the GPU.  A switch saves and
 * restores the callee-saved registers and the stack pointer (kiln_fswitch_
 * below, about 20 instructions, no system call); shared memory is one buffer per
 * OpenMP thread, reused block after block.
 *
 * A cooperative kernel (kiln.cg.this_grid(), g.sync()) needs more: a grid barrier
 * waits for every thread of the grid, so its entry opens every block of the grid at
 * once (kiln_blk_start_ for each), runs each block's rounds until all its fibers have
 * ended or are parked at the grid barrier (kiln_blk_rounds_), and when no block has a
 * fiber left to run, releases the parked ones (kiln_blk_release_) and goes again.  The
 * grid's threads are bounded (KILN_CG_MAX_THREADS in kiln.h, which the entry checks);
 * max_cooperative_grid_blocks reports that bound.
 *
 * Stacks: each fiber gets the kernel's local arrays plus KILN_FIBER_MARGIN, with
 * a page below it that faults when a fiber overflows it rather than writing into
 * its neighbour's.  Allocation failures end the launch with KILN_ERR_NOMEM.
 * x86-64 only (the switch is assembly); elsewhere the kernel does not compile,
 * and the error says why. */
#if !defined(__x86_64__)
#error "kiln: kernels with shared memory or barriers run on the CPU only on x86-64"
#endif

void *mmap(void *, unsigned long, int, int, int, long);
int munmap(void *, unsigned long);
int mprotect(void *, unsigned long, int);
#define KILN_FIBER_MARGIN (64 << 10) /* a fiber's stack beyond its local arrays */
#define kiln_dsmem (B_->dsh)
#define KILN_DSMEM_BYTES (B_->dsh_bytes)
#define KILN_PAGE 4096
#define KILN_ERR_NOMEM_ 7 /* KILN_ERR_NOMEM in kiln.h */

/* where a fiber is: running (or ready to), parked at a block barrier, at a warp
 * operation, at a grid barrier, or ended */
enum { KILN_F_RUN, KILN_F_BAR, KILN_F_WARP, KILN_F_GRID, KILN_F_DONE };
typedef struct kiln_fiber {
    void *sp;  /* saved stack pointer while switched out */
    int state; /* KILN_F_* */
    int pad_;
} kiln_fiber;

struct kiln_blk {
    unsigned char *sh;   /* static shared memory of one block */
    unsigned char *dsh;  /* dynamic shared memory (the launch's 4th value) */
    long long dsh_bytes;
    long long n;         /* threads of a block */
    long long cur;       /* the fiber running now */
    long long bgen;      /* block barriers passed: syncthreads_count & co count in bgen & 1 */
    long long wgen;      /* warp operations passed (activemask's tags) */
    int pred_n[2], pred_c[2];
    void *sched_sp;      /* the scheduler's stack pointer while a fiber runs */
    kiln_fiber *fib;
    unsigned long long *xch; /* warp exchanges: one word per thread */
    unsigned long long *tag; /* activemask: the warp pass and call site each thread is at */
    unsigned char *mem;  /* one mapping: shared memory, then each fiber's guard page and stack */
    unsigned long mem_bytes, stack_bytes;
    void (*run)(kiln_blk *, void *, long long);
    void *arg;
};

/* kiln_fswitch_(save, to): saves the callee-saved registers on this stack, stores
 * the stack pointer in *save, and continues on the stack `to`, where the same
 * six registers and a return address were saved (by a switch, or by
 * kiln_fiber_stack for a new fiber, whose return address is kiln_fstart_). */
void kiln_fswitch_(void **save, void *to);
void kiln_fstart_(void);
__asm__(".text\n"
        ".p2align 4\n"
        ".hidden kiln_fswitch_\n"
        ".globl kiln_fswitch_\n"
        "kiln_fswitch_:\n"
        "    pushq %rbp\n    pushq %rbx\n    pushq %r12\n"
        "    pushq %r13\n    pushq %r14\n    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n    popq %r14\n    popq %r13\n"
        "    popq %r12\n    popq %rbx\n    popq %rbp\n"
        "    ret\n"
        ".hidden kiln_fstart_\n"
        ".globl kiln_fstart_\n"
        "kiln_fstart_:\n"
        "    movq %r12, %rdi\n"
        "    call *%rbx\n"
        "    ud2\n");

/* A fiber's life: its thread of the block, then back to the scheduler for good. */
static void kiln_fmain_(kiln_blk *B) {
    long long t = B->cur;
    B->run(B, B->arg, t);
    B->fib[t].state = KILN_F_DONE;
    kiln_fswitch_(&B->fib[t].sp, B->sched_sp);
}

/* Parks this fiber (state: why) until the scheduler lets it go on. */
KILN_FN void kiln_park_(kiln_blk *B, int state) {
    B->fib[B->cur].state = state;
    kiln_fswitch_(&B->fib[B->cur].sp, B->sched_sp);
}

/* A spin point (SemaResult.spin: an atomic whose result a loop reads, a fence in a
 * loop): the block's other fibers run before this one goes on, so a thread that waits in
 * a loop for another thread's write (a flag set with an atomic) sees it, where running
 * one fiber to its end would wait forever.  The GPU's warps interleave the same way. */
KILN_FN void kiln_yield_(kiln_blk *B) { kiln_park_(B, KILN_F_RUN); }
#define KILN_SPIN_(x) ({ __typeof__(x) ks_ = (x); kiln_yield_(B_); ks_; })

/* syncthreads(): wait for every fiber of the block */
KILN_FN void kiln_sync_(kiln_blk *B) { kiln_park_(B, KILN_F_BAR); }

/* syncwarp() and each half of a warp exchange: wait for the lanes of this warp */
KILN_FN void kiln_wsync_(kiln_blk *B) { kiln_park_(B, KILN_F_WARP); }

/* g.sync() of kiln.cg: park until every fiber of the grid is parked or done */
KILN_FN void kiln_grid_sync_(kiln_blk *B) { kiln_park_(B, KILN_F_GRID); }

/* syncthreads_count/and/or (kind 0, 1, 2): the predicates of this barrier's arrivals */
KILN_FN int kiln_sync_pred_(kiln_blk *B, int kind, int pred) {
    int r = (int)(B->bgen & 1);
    B->pred_n[r]++;
    B->pred_c[r] += pred != 0;
    kiln_sync_(B);
    return kind == 0 ? B->pred_c[r] : kind == 1 ? B->pred_c[r] == B->pred_n[r] : B->pred_c[r] > 0;
}

/* ---- warps: lanes are threads cur & 31 of the block's linear order, as on the GPU.
 * An exchange writes this thread's word, waits for its warp, reads the word of its
 * source lane, and waits again before anyone writes the next one. */
#define KILN_LANEID ((long long)(B_->cur & 31))

KILN_FN unsigned long long kiln_xchg_(kiln_blk *B, unsigned long long v, long long src_lane) {
    long long me = B->cur, base = me & ~31ll;
    B->xch[me] = v;
    kiln_wsync_(B);
    long long src = base + src_lane;
    unsigned long long r = src_lane >= 0 && src_lane < 32 && src < B->n ? B->xch[src] : v;
    kiln_wsync_(B);
    return r;
}

/* kind 0 down, 1 up, 2 xor, 3 idx (the lane itself) */
KILN_FN unsigned long long kiln_shfl_bits_(kiln_blk *B, int kind, unsigned long long v,
                                           long long arg) {
    long long lane = B->cur & 31;
    long long src = kind == 0 ? lane + arg : kind == 1 ? lane - arg : kind == 2 ? lane ^ arg
                                                                     : (arg & 31);
    return kiln_xchg_(B, v, src);
}
#define KILN_SHFL(T)                                                                      \
    KILN_FN T kiln_shfl_##T(kiln_blk *B, int kind, T v, long long arg) {                  \
        unsigned long long u = 0;                                                         \
        memcpy(&u, &v, sizeof v);                                                         \
        u = kiln_shfl_bits_(B, kind, u, arg);                                             \
        T r;                                                                              \
        memcpy(&r, &u, sizeof r);                                                         \
        return r;                                                                         \
    }
KILN_SHFL(i32)
KILN_SHFL(i64)
KILN_SHFL(u32)
KILN_SHFL(u64)
KILN_SHFL(f32)
KILN_SHFL(f64)

/* The lanes of this thread's warp that exist (a last warp may be short). */
KILN_FN unsigned kiln_lanes_(kiln_blk *B) {
    long long base = B->cur & ~31ll, left = B->n - base;
    return left >= 32 ? 0xffffffffu : (1u << left) - 1u;
}

/* activemask(): the lanes of the warp that reach this call site in this pass, as a GPU's
 * diverged warp runs one side of a branch at a time (site: the call's place in the source). */
KILN_FN unsigned kiln_activemask_(kiln_blk *B, unsigned site) {
    long long me = B->cur, base = me & ~31ll;
    unsigned long long mine = (unsigned long long)B->wgen << 32 | site;
    B->tag[me] = mine;
    kiln_wsync_(B);
    unsigned m = 0, lanes = kiln_lanes_(B);
    for (int l = 0; l < 32; l++)
        if (((lanes >> l) & 1u) && B->tag[base + l] == mine) m |= 1u << l;
    kiln_wsync_(B);
    return m;
}

/* kind 0 ballot (the mask of lanes in `mask` whose predicate holds), 1 all, 2 any */
KILN_FN unsigned kiln_vote_(kiln_blk *B, int kind, unsigned mask, int pred) {
    long long me = B->cur, base = me & ~31ll;
    B->xch[me] = pred != 0;
    kiln_wsync_(B);
    unsigned ballot = 0;
    mask &= kiln_lanes_(B);
    for (int l = 0; l < 32; l++)
        if (((mask >> l) & 1u) && B->xch[base + l]) ballot |= 1u << l;
    kiln_wsync_(B);
    return kind == 0 ? ballot : kind == 1 ? ballot == mask : ballot != 0;
}

/* eq_sync: whether every lane in `mask` has the same predicate */
KILN_FN unsigned kiln_vote_eq_(kiln_blk *B, unsigned mask, int pred) {
    unsigned b = kiln_vote_(B, 0, mask, pred);
    mask &= kiln_lanes_(B);
    return b == 0 || b == mask;
}

/* match_any_sync (kind 0): the lanes in `mask` whose value has this lane's bits;
 * match_all_sync (kind 1): mask | 1 << 32 when every lane in `mask` has the same bits,
 * else 0 (the caller splits it into Numba's (mask, predicate) pair) */
KILN_FN unsigned long long kiln_match_(kiln_blk *B, int kind, unsigned mask,
                                       unsigned long long bits) {
    long long me = B->cur, base = me & ~31ll;
    B->xch[me] = bits;
    kiln_wsync_(B);
    unsigned same = 0;
    mask &= kiln_lanes_(B);
    for (int l = 0; l < 32; l++)
        if (((mask >> l) & 1u) && B->xch[base + l] == bits) same |= 1u << l;
    kiln_wsync_(B);
    if (kind == 0) return same;
    return same == mask ? (unsigned long long)mask | 1ull << 32 : 0;
}
KILN_FN unsigned long long kiln_fbits32_(f32 x) {
    u32 b;
    memcpy(&b, &x, 4);
    return b;
}
KILN_FN unsigned long long kiln_fbits64_(f64 x) {
    unsigned long long b;
    memcpy(&b, &x, 8);
    return b;
}

/* Maps shared memory and n stacks of local_bytes + margin each; 0 or -1. */
static int kiln_blk_open_(kiln_blk *B, long long n, long long shared, long long dyn,
                          long long local_bytes, void (*run)(kiln_blk *, void *, long long),
                          void *arg) {
    unsigned long sh = ((unsigned long)shared + 15) & ~15ul;
    unsigned long dsh = ((unsigned long)dyn + 15) & ~15ul;
    unsigned long head = (sh + dsh + n * (sizeof(kiln_fiber) + 16) + KILN_PAGE - 1) &
                         ~(KILN_PAGE - 1ul);
    unsigned long stack = ((unsigned long)local_bytes + KILN_FIBER_MARGIN + KILN_PAGE - 1) &
                          ~(KILN_PAGE - 1ul);
    B->mem_bytes = head + (unsigned long)n * (stack + KILN_PAGE);
    /* PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE: pages cost
     * nothing until a fiber touches them */
    void *m = mmap(0, B->mem_bytes, 3, 0x02 | 0x20 | 0x4000, -1, 0);
    if (m == (void *)-1) return -1;
    B->mem = (unsigned char *)m;
    for (long long t = 0; t < n; t++) /* each stack's lowest page: PROT_NONE */
        if (mprotect(B->mem + head + (unsigned long)t * (stack + KILN_PAGE), KILN_PAGE, 0) != 0) {
            munmap(m, B->mem_bytes);
            return -1;
        }
    B->sh = B->mem;
    B->dsh = B->mem + sh;
    B->dsh_bytes = dyn;
    B->xch = (unsigned long long *)(void *)(B->mem + sh + dsh);
    B->tag = B->xch + n;
    B->fib = (kiln_fiber *)(void *)(B->mem + sh + dsh + n * 16);
    B->stack_bytes = stack;
    B->n = n;
    B->run = run;
    B->arg = arg;
    return 0;
}

/* Block lanes (plan.h): a block's shared memory alone, for n threads run as lane loops
 * of one call (no fibers, no stacks). */
static __attribute__((unused)) int kiln_blk_lanes_open_(kiln_blk *B, long long n,
                                                        long long shared, long long dyn) {
    unsigned long sh = ((unsigned long)shared + 15) & ~15ul;
    unsigned long dsh = ((unsigned long)dyn + 15) & ~15ul;
    B->mem_bytes = sh + dsh ? sh + dsh : 16;
    void *m = mmap(0, B->mem_bytes, 3, 0x02 | 0x20 | 0x4000, -1, 0);
    if (m == (void *)-1) return -1;
    B->mem = (unsigned char *)m;
    B->sh = B->mem;
    B->dsh = B->mem + sh;
    B->dsh_bytes = dyn;
    B->n = n;
    B->fib = 0;
    B->xch = B->tag = 0;
    return 0;
}

static void kiln_blk_close_(kiln_blk *B) { munmap(B->mem, B->mem_bytes); }

/* Sets every fiber of a block at its start. */
static __attribute__((unused)) void kiln_blk_start_(kiln_blk *B) {
    unsigned long head = (unsigned long)((unsigned char *)(B->fib + B->n) - B->mem);
    head = (head + KILN_PAGE - 1) & ~(KILN_PAGE - 1ul);
    for (long long t = 0; t < B->n; t++) {
        unsigned char *top = B->mem + head + (unsigned long)t * (B->stack_bytes + KILN_PAGE) +
                             KILN_PAGE + B->stack_bytes;
        void **sp = (void **)(void *)top;
        /* the first switch returns into kiln_fstart_ with rsp at the top (16-byte
         * aligned), so its call enters kiln_fmain_ with rsp + 8 aligned, as the ABI wants */
        *--sp = (void *)kiln_fstart_;  /* the return address of the first switch */
        *--sp = 0;                      /* rbp */
        *--sp = (void *)kiln_fmain_;    /* rbx: what kiln_fstart_ calls */
        *--sp = (void *)B;              /* r12: its argument */
        *--sp = 0;                      /* r13 */
        *--sp = 0;                      /* r14 */
        *--sp = 0;                      /* r15 */
        B->fib[t].sp = sp;
        B->fib[t].state = KILN_F_RUN;
    }
    B->bgen = B->wgen = 0;
    B->pred_n[0] = B->pred_c[0] = 0;
}

/* Runs passes until no fiber of the block can run: each has ended or is parked at a
 * grid barrier.  After a pass, the fibers parked at warp operations go on; when there
 * are none, those parked at syncthreads() (every fiber that has not ended or is not at
 * the grid barrier is there, or waits no more for a warp whose other lanes are parked
 * elsewhere: a GPU would hang or run on there, and this goes on).  Returns the fibers
 * that have not ended. */
static __attribute__((unused)) long long kiln_blk_rounds_(kiln_blk *B) {
    for (;;) {
        for (long long t = 0; t < B->n; t++) {
            if (B->fib[t].state != KILN_F_RUN) continue;
            B->cur = t;
            kiln_fswitch_(&B->sched_sp, B->fib[t].sp);
        }
        long long live = 0, warp = 0, bar = 0, run = 0;
        for (long long t = 0; t < B->n; t++) {
            int st = B->fib[t].state;
            live += st != KILN_F_DONE;
            warp += st == KILN_F_WARP;
            bar += st == KILN_F_BAR;
            run += st == KILN_F_RUN; /* yielded at a spin point: another pass */
        }
        if (run) continue;
        int from = warp ? KILN_F_WARP : KILN_F_BAR;
        if (!warp && !bar) return live;
        if (warp) {
            B->wgen++;
        } else { /* a block barrier is passed: the next one counts from zero */
            B->bgen++;
            B->pred_n[B->bgen & 1] = B->pred_c[B->bgen & 1] = 0;
        }
        for (long long t = 0; t < B->n; t++)
            if (B->fib[t].state == from) B->fib[t].state = KILN_F_RUN;
    }
}

/* The grid barrier is passed: its fibers run on. */
static __attribute__((unused)) void kiln_blk_release_(kiln_blk *B) {
    for (long long t = 0; t < B->n; t++)
        if (B->fib[t].state == KILN_F_GRID) B->fib[t].state = KILN_F_RUN;
}

/* Runs one block: every fiber from the start, in rounds, until all are done. */
static void kiln_blk_run_(kiln_blk *B) {
    kiln_blk_start_(B);
    kiln_blk_rounds_(B);
}
