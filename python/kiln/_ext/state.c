/* state.c: the module state (state.h), which every file reads.
 *
 * One ModState per module object (multi-phase init, as CPython's _json.c
 * does): the exception classes and heap types, the interned names the launch
 * path looks up, the CUDA driver and NVRTC once opened, the kernels' error
 * records per device, and the artifact cache.  The files that make its
 * objects fill it in at module init; it is traversed and cleared here.
 */
#include <string.h>

#include "state.h"

ModState *ext_state(PyObject *module) { return (ModState *)PyModule_GetState(module); }

ModState *ext_state_of_type(PyTypeObject *tp) {
    /* up the solid bases: a Python subclass (kiln.Dispatcher) has no module */
    for (PyTypeObject *t = tp; t; t = t->tp_base) {
        if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE)) continue;
        PyObject *m = ((PyHeapTypeObject *)t)->ht_module;
        PyModuleDef *def = m ? PyModule_GetDef(m) : NULL;
        if (def && def->m_size == (Py_ssize_t)sizeof(ModState) &&
            strcmp(def->m_name, "kiln._kiln") == 0)
            return ext_state(m);
    }
    PyErr_Format(PyExc_TypeError, "%.100s is not a kiln type", tp->tp_name);
    return NULL;
}

int ext_state_traverse(ModState *st, visitproc visit, void *arg) {
    Py_VISIT(st->CudaError);
    Py_VISIT(st->CudaErrorCompat);
    Py_VISIT(st->PerformanceWarning);
    Py_VISIT(st->CacheWarning);
    Py_VISIT(st->CacheError);
    Py_VISIT(st->DeviceArrayType);
    Py_VISIT(st->AllocType);
    Py_VISIT(st->StreamType);
    Py_VISIT(st->EventType);
    Py_VISIT(st->PinnedType);
    Py_VISIT(st->device_array_class);
    Py_VISIT(st->mapped_class);
    for (int i = 0; i < EXT_MAX_DEVICES; i++) Py_VISIT(st->err_files[i]);
    Py_VISIT(st->CompileError);
    Py_VISIT(st->ProgramType);
    Py_VISIT(st->EntryType);
    Py_VISIT(st->DispatcherType);
    Py_VISIT(st->LauncherType);
    Py_VISIT(st->UfuncType);
    Py_VISIT(st->RecordType);
    Py_VISIT(st->enum_tags);
    for (int i = 0; i < st->n_np_scalar; i++) Py_VISIT(st->np_scalar[i].tp);
    return 0;
}

void ext_state_clear(ModState *st) {
    Py_CLEAR(st->CudaError);
    Py_CLEAR(st->CudaErrorCompat);
    Py_CLEAR(st->PerformanceWarning);
    Py_CLEAR(st->CacheWarning);
    Py_CLEAR(st->CacheError);
    Py_CLEAR(st->DeviceArrayType);
    Py_CLEAR(st->AllocType);
    Py_CLEAR(st->StreamType);
    Py_CLEAR(st->EventType);
    Py_CLEAR(st->PinnedType);
    Py_CLEAR(st->device_array_class);
    Py_CLEAR(st->mapped_class);
    for (int i = 0; i < EXT_MAX_DEVICES; i++) Py_CLEAR(st->err_files[i]);
    Py_CLEAR(st->str_resolve_target);
    Py_CLEAR(st->str_cai);
    Py_CLEAR(st->str_dlpack);
    Py_CLEAR(st->str_dlpack_device);
    Py_CLEAR(st->str_cai_shape);
    Py_CLEAR(st->str_cai_typestr);
    Py_CLEAR(st->str_cai_data);
    Py_CLEAR(st->str_cai_strides);
    Py_CLEAR(st->str_cai_stream);
    Py_CLEAR(st->str_cai_mask);
    Py_CLEAR(st->CompileError);
    Py_CLEAR(st->ProgramType);
    Py_CLEAR(st->EntryType);
    Py_CLEAR(st->DispatcherType);
    Py_CLEAR(st->LauncherType);
    Py_CLEAR(st->UfuncType);
    Py_CLEAR(st->RecordType);
    Py_CLEAR(st->enum_tags);
    for (int i = 0; i < st->n_np_scalar; i++) Py_CLEAR(st->np_scalar[i].tp);
    st->n_np_scalar = 0;
    Py_CLEAR(st->str_compile_key);
    Py_CLEAR(st->str_ufunc_call);
}
