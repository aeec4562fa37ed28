/* namedtuple.c: namedtuple classes in kernels.  A global class made by
 * collections.namedtuple (or typing.NamedTuple) reaches sema as a module whose name is
 * "namedtuple:NAME:f1,f2,..." (kiln._compile.describe); called with one value per field,
 * by position or by field name, it makes a named tuple (types.h): a tuple whose fields
 * are also read by name (p.x), a type of its own (Point(1, 2) is not the tuple (1, 2), as
 * in Numba).  Namedtuple arguments of kernels are built this way by the wrapper kernel of
 * tuple arguments (kiln._dispatch._tuple_kernel).
 */
#include <string.h>

#include "sema_int.h"

void sema_namedtuple_class(Compiler *C, NsRef *ns, const char *desc) {
    /* desc: "namedtuple:NAME:f1,f2" */
    const char *name = desc + strlen("namedtuple:");
    const char *colon = strchr(name, ':');
    if (!colon) return;
    ns->tname = arena_strndup(&C->arena, name, (size_t)(colon - name));
    const char *p = colon + 1;
    int n = *p ? 1 : 0;
    for (const char *q = p; *q; q++) n += *q == ',';
    const char **fields = arena_alloc(&C->arena, sizeof(char *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        fields[i] = arena_strndup(&C->arena, p, len);
        p += len + (e ? 1 : 0);
    }
    ns->fields = fields;
    ns->nfields = n;
}

const Type *sema_namedtuple_make(Sema *S, Node *n, const NsRef *ns) {
    Compiler *C = S->C;
    int nf = ns->nfields;
    NodeList *args = &n->call.args;
    Node **bound = arena_alloc(&C->arena, sizeof(Node *) * (size_t)(nf + 1));
    for (int i = 0; i < nf; i++) bound[i] = NULL;
    if (args->n > nf) {
        error_at(C, n->sp, NULL, "%s() takes %d values, one per field (%d given)", ns->tname, nf,
                 args->n);
        return &ty_error;
    }
    for (int i = 0; i < args->n; i++) bound[i] = args->v[i];
    for (int k = 0; k < n->call.kwvals.n; k++) {
        int f = -1;
        for (int i = 0; i < nf; i++)
            if (strcmp(ns->fields[i], n->call.kwnames[k]) == 0) f = i;
        if (f < 0 || bound[f]) {
            error_at(C, n->call.kwvals.v[k]->sp, NULL,
                     f < 0 ? "%s() has no field '%s'" : "%s() got two values for field '%s'",
                     ns->tname, n->call.kwnames[k]);
            return &ty_error;
        }
        bound[f] = n->call.kwvals.v[k];
    }
    const Type **el = arena_alloc(&C->arena, sizeof(Type *) * (size_t)(nf + 1));
    bool unk = false;
    for (int i = 0; i < nf; i++) {
        if (!bound[i]) {
            error_at(C, n->sp, "give every field a value", "%s() is missing the field '%s'",
                     ns->tname, ns->fields[i]);
            return &ty_error;
        }
        el[i] = sema_expr(S, bound[i]);
        if (IS_ERR(el[i])) return &ty_error;
        if (IS_UNKNOWN(el[i])) unk = true;
    }
    if (unk) return &ty_unknown;
    n->call.bound.v = bound;
    n->call.bound.n = nf;
    n->intr = intrinsic_lookup("namedtuple.make");
    return ty_named_tuple(C, nf, el, ns->tname, ns->fields);
}
