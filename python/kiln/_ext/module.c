/* module.c: kiln._kiln, the thin C layer between Python and the kiln core.
 *
 * Module init only: each file below registers its types, functions and names
 * (state.h lists the files and the direction of their calls; the launch path
 * is launch.c).  Multi-phase init, module state and heap types, as CPython's
 * _json.c does.
 */
#include "args.h"
#include "cache.h"
#include "core.h"
#include "devarray.h"
#include "dispatcher.h"
#include "driver.h"
#include "errors.h"
#include "exectext.h"
#include "records.h"
#include "host.h"
#include "interop.h"
#include "ipc.h"
#include "layoutsig.h"
#include "launch.h"
#include "nvrtc.h"
#include "record.h"
#include "obs.h"
#include "signals.h"
#include "state.h"
#include "table.h"
#include "tier.h"
#include "tunedepth.h"
#include "trace.h"
#include "ufunc.h"

static int mod_exec(PyObject *m) {
    ModState *st = ext_state(m);
    if (ext_errors_init(m, st) < 0) return -1;
    if (ext_obs_init(st) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_obs_functions) < 0) return -1;
    /* the events a trace keeps (trace.h), which _obs.py's recorders keep in all too */
    if (PyModule_AddIntConstant(m, "TRACE_MAX_EVENTS", TRACE_MAX_EVENTS) < 0) return -1;
    if (ext_signals_init() < 0) return -1;
    if (ext_devarray_types(m, st) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_devarray_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_layoutsig_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_interop_functions) < 0) return -1;
    if (ext_host_types(m, st) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_host_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_driver_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_nvrtc_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_cache_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_args_functions) < 0) return -1;
    pthread_mutex_init(&st->cache_warn_mu, NULL);
    if (ext_tier_init(st) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_tier_functions) < 0) return -1;
    if (ext_core_init(m, st) < 0) return -1;
    if (ext_table_init(m, st) < 0) return -1;
    if (ext_dispatcher_init(m, st) < 0) return -1;
    if (ext_launch_init(m, st) < 0) return -1;
    if (ext_record_init(m, st) < 0) return -1;
    if (ext_interop_init(m, st) < 0) return -1;
    if (ext_exectext_init() < 0) return -1;
    if (PyModule_AddFunctions(m, ext_exectext_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_records_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_ipc_functions) < 0) return -1;
    if (PyModule_AddFunctions(m, ext_tunedepth_functions) < 0) return -1;
    if (ext_tunedepth_init(m) < 0) return -1;
    if (ext_ufunc_init(m, st) < 0) return -1;
    if (PyModule_AddStringConstant(m, "version", kiln_version()) < 0) return -1;
    return 0;
}

static int mod_traverse(PyObject *m, visitproc visit, void *arg) {
    return ext_state_traverse(ext_state(m), visit, arg);
}

static int mod_clear(PyObject *m) {
    ext_state_clear(ext_state(m));
    return 0;
}

static void mod_free(void *m) {
    mod_clear((PyObject *)m);
    /* the optimising builds use the cache: close it only when they are over */
    if (ext_tier_shutdown(ext_state((PyObject *)m)) == 0) ext_cache_free(ext_state((PyObject *)m));
    ext_obs_free(ext_state((PyObject *)m));
}

static PyModuleDef_Slot mod_slots[] = {{Py_mod_exec, mod_exec}, {0, NULL}};

static struct PyModuleDef kiln_module = {
    PyModuleDef_HEAD_INIT, "kiln._kiln", "kiln's C core: translation, builds and the launch path.",
    sizeof(ModState), NULL, mod_slots, mod_traverse, mod_clear, mod_free};

PyMODINIT_FUNC PyInit__kiln(void);
PyMODINIT_FUNC PyInit__kiln(void) { return PyModuleDef_Init(&kiln_module); }
