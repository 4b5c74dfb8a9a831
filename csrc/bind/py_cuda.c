/*
 * py_cuda.c - _core.cuda_status(): whether this build has the CUDA kernels (kernels/, _core.WITH_CUDA)
 * and a usable device.  Without MG_WITH_CUDA nothing of CUDA is linked.
 */
#include "bindings.h"

#ifdef MG_WITH_CUDA
#include "../../kernels/mgk.h"
#endif

static PyObject *py_cuda_status(PyObject *Py_UNUSED(mod), PyObject *Py_UNUSED(ignored))
{
#ifdef MG_WITH_CUDA
    char msg[256];
    int n;
    Py_BEGIN_ALLOW_THREADS
    n = mgk_device_count(msg, sizeof msg);
    Py_END_ALLOW_THREADS
    return Py_BuildValue("(is)", n, msg);
#else
    return Py_BuildValue("(is)", 0,
                         "mavgame was built without its CUDA kernels (nvcc was not found at build time, "
                         "MAVGAME_NO_CUDA was set, or the kernels failed to compile)");
#endif
}

static PyMethodDef cuda_methods[] = {
    {"cuda_status", py_cuda_status, METH_NOARGS,
     "cuda_status() -> (int, str)\n\nThe number of usable CUDA devices (0 without the CUDA build, a GPU or a "
     "driver) and a sentence saying which, or why none."},
    {NULL, NULL, 0, NULL},
};

int mg_bind_cuda(PyObject *m)
{
    return PyModule_AddFunctions(m, cuda_methods);
}
