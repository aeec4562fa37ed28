/* cas_retry.c: a compare-and-swap loop that retries an update, told apart from one that
 * waits for another thread.
 *
 * On the CPU a loop that reads an atomic's result is a spin point (sema_spin_point): the
 * kernel runs its blocks as fibers that yield after each such atomic, so that a thread
 * waiting for a lock another fiber of its block holds lets that fiber run.  CUDA's
 * lock-free update needs none of it:
 *
 *     old = ary[i]                       # (any value: a stale one only costs a pass)
 *     while True:
 *         assumed = old
 *         old = cuda.atomic.compare_and_swap(ary[i:], assumed, f(assumed))
 *         if old == assumed:
 *             break
 *
 * A failed swap returns what the memory holds, which the next pass expects: each pass
 * can succeed without another thread doing anything, so the loop never waits for one.
 * The same with the expected value read from the array at the top of each pass
 * (`assumed = ary[i]`).  A lock (`while cas(lock, 0, 1) != 0: pass`) expects a constant
 * and does wait: it stays a spin point.
 *
 * The loop's body must hold the swap as `X = cas(...)` or as an operand of an `if`'s
 * comparison, at its top level; its expected value a name A assigned once in the body,
 * before that statement and at its top level, from X (assigned only there) or from an
 * array element.  The rest of the loop is checked as before: another atomic whose result
 * it reads, or a fence, still makes it a spin point.
 */
#include <string.h>

#include "sema_int.h"

/* Assignments to the name `id` in block l and the blocks in it (targets of =, +=, for). */
static int assigns(const NodeList *l, const char *id);

static int target_assigns(const Node *t, const char *id) {
    if (t->kind == E_NAME) return strcmp(t->name.id, id) == 0;
    int c = 0;
    if (t->kind == E_TUPLE)
        for (int i = 0; i < t->tuple.n; i++) c += target_assigns(t->tuple.v[i], id);
    return c;
}

static int assigns(const NodeList *l, const char *id) {
    int c = 0;
    for (int i = 0; i < l->n; i++) {
        const Node *n = l->v[i];
        switch ((NodeKind)n->kind) {
        case S_ASSIGN:
            for (int j = 0; j < n->assign.targets.n; j++) c += target_assigns(n->assign.targets.v[j], id);
            break;
        case S_AUGASSIGN: c += target_assigns(n->aug.target, id); break;
        case S_IF:
        case S_WHILE:
            c += assigns(&n->ifs.body, id) + assigns(&n->ifs.orelse, id);
            break;
        case S_FOR:
            c += target_assigns(n->fors.target, id) + assigns(&n->fors.body, id) +
                 assigns(&n->fors.orelse, id);
            break;
        case S_DEF: c += n->def.name && strcmp(n->def.name, id) == 0; break;
        default: break;
        }
    }
    return c;
}

bool sema_cas_retry(const Node *loop, const Node *cas) {
    if (!loop || (loop->kind != S_WHILE && loop->kind != S_FOR)) return false;
    const NodeList *body = loop->kind == S_WHILE ? &loop->ifs.body : &loop->fors.body;
    const NodeList *a = &cas->call.args;
    const Node *exp = a->n == 3 ? a->v[1] : a->n == 4 ? a->v[2] : NULL;
    if (!exp || exp->kind != E_NAME) return false;
    const char *A = exp->name.id, *X = NULL;
    int at = -1;
    for (int i = 0; i < body->n && at < 0; i++) {
        const Node *st = body->v[i];
        if (st->kind == S_ASSIGN && st->assign.value == cas && st->assign.targets.n == 1 &&
            st->assign.targets.v[0]->kind == E_NAME) {
            at = i;
            X = st->assign.targets.v[0]->name.id;
        } else if (st->kind == S_IF && st->ifs.cond->kind == E_COMPARE) {
            const NodeList *ops = &st->ifs.cond->cmp.operands;
            for (int j = 0; j < ops->n; j++)
                if (ops->v[j] == cas) at = i;
        }
    }
    if (at < 0 || assigns(body, A) != 1) return false;
    for (int i = 0; i < at; i++) {
        const Node *st = body->v[i];
        if (st->kind != S_ASSIGN || st->assign.targets.n != 1 ||
            st->assign.targets.v[0]->kind != E_NAME || strcmp(st->assign.targets.v[0]->name.id, A))
            continue;
        const Node *v = st->assign.value;
        if (v->kind == E_SUBSCRIPT) return true; /* read from memory at each pass */
        return X && v->kind == E_NAME && strcmp(v->name.id, X) == 0 && strcmp(X, A) != 0 &&
               assigns(body, X) == 1;
    }
    return false;
}
