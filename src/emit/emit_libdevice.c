/* emit_libdevice.c: the libdevice functions a CUDA program calls (kiln.libdevice,
 * sema's libdevice.c): a declaration of each __nv_ function used and a wrapper that kiln's
 * calls go through (emit_expr.c writes `kiln_ld_NAME(args)`), which passes the addresses of
 * locals for the function's pointer results and returns them with its result as kiln's
 * tuple.  NVRTC links libdevice into every program; unused functions cost nothing.  On
 * the CPU the functions are rt_libdevice_cpu.h's, pasted into a program that calls one.
 */
#include "emit_int.h"

static const char *ld_ctype(Emit *E, char c) {
    return c == 'v' ? "void" : emit_ctype(E, libdevice_type(c));
}

bool emit_uses_libdevice(const Emit *E) {
    for (int i = 0; i < libdevice_count(); i++)
        if (E->R->libdevice[i / 64] >> (i % 64) & 1) return true;
    return false;
}

void emit_libdevice_decls(Emit *E, Buf *o) {
    Buf *saved = E->o;
    E->o = o;
    for (int i = 0; i < libdevice_count(); i++) {
        if (!(E->R->libdevice[i / 64] >> (i % 64) & 1)) continue;
        const LibdeviceFn *f = libdevice_at(i);
        const Type *rt = libdevice_result(E->C, f);
        if (E->cuda) { /* the CPU's are defined by rt_libdevice_cpu.h */
            P("extern \"C\" __device__ %s __nv_%s(", ld_ctype(E, f->ret), f->name);
            for (int k = 0; f->params[k]; k++)
                P("%s%s%s", k ? ", " : "", ld_ctype(E, f->params[k]), f->outs >> k & 1 ? " *" : "");
            PS(");\n");
        }
        P("KILN_FN %s kiln_ld_%s(", rt->kind == TY_NONE ? "void" : emit_ctype(E, rt), f->name);
        bool first = true;
        for (int k = 0; f->params[k]; k++) {
            if (f->outs >> k & 1) continue;
            P("%s%s a%d", first ? "" : ", ", ld_ctype(E, f->params[k]), k);
            first = false;
        }
        PS(") { ");
        for (int k = 0; f->params[k]; k++)
            if (f->outs >> k & 1) P("%s o%d; ", ld_ctype(E, f->params[k]), k);
        if (f->ret != 'v') P("%s r = ", ld_ctype(E, f->ret));
        P("__nv_%s(", f->name);
        for (int k = 0; f->params[k]; k++) P("%s%s%d", k ? ", " : "", f->outs >> k & 1 ? "&o" : "a", k);
        PS("); ");
        if (rt->kind == TY_TUPLE) {
            P("return %s(", emit_tuple_make(E, rt));
            bool c = false;
            if (f->ret != 'v') {
                PS("r");
                c = true;
            }
            for (int k = 0; f->params[k]; k++)
                if (f->outs >> k & 1) {
                    P("%so%d", c ? ", " : "", k);
                    c = true;
                }
            PS(");");
        } else if (f->ret != 'v') {
            PS("return r;");
        } else if (rt->kind != TY_NONE) {
            for (int k = 0; f->params[k]; k++)
                if (f->outs >> k & 1) P("return o%d;", k);
        }
        PS(" }\n");
    }
    E->o = saved;
}
