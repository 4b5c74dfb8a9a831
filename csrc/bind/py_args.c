/* py_args.c - range-checked integer arguments and real arrays of the binding (see py_args.h). */
#include "py_args.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

/* The C type's range of a destination kind (unsigned: lo 0, *uhi its maximum). */
static void kind_range(int kind, long long *lo, long long *hi, unsigned long long *uhi)
{
    *uhi = 0;
    switch (kind) {
    case MG_PY_K_INT:
        *lo = INT_MIN, *hi = INT_MAX;
        break;
    case MG_PY_K_LONG:
        *lo = LONG_MIN, *hi = LONG_MAX;
        break;
    case MG_PY_K_LLONG:
        *lo = LLONG_MIN, *hi = LLONG_MAX;
        break;
    case MG_PY_K_UINT:
        *lo = 0, *hi = UINT_MAX, *uhi = UINT_MAX;
        break;
    case MG_PY_K_ULONG:
        *lo = 0, *hi = LLONG_MAX, *uhi = ULONG_MAX;
        break;
    default: /* MG_PY_K_ULLONG */
        *lo = 0, *hi = LLONG_MAX, *uhi = ULLONG_MAX;
        break;
    }
}

/* "<name> must be in [lo, hi], got <value>": OverflowError when the value does not fit the type. */
static int refuse(const mg_py_int_spec *s, PyObject *v, int fits_type, unsigned long long uhi)
{
    PyObject *exc = fits_type ? PyExc_ValueError : PyExc_OverflowError;
    int unsigned_top = s->hi < 0 && uhi > 0; /* an unsigned destination's whole range */
    if (unsigned_top && uhi == ULLONG_MAX && s->lo == 0)
        PyErr_Format(exc, "%s must be in [0, 2**64), got %R", s->name, v);
    else if (unsigned_top)
        PyErr_Format(exc, "%s must be in [%lld, %llu], got %R", s->name, s->lo, uhi, v);
    else
        PyErr_Format(exc, "%s must be in [%lld, %lld], got %R", s->name, s->lo, s->hi, v);
    return 0;
}

int mg_py_int_conv(PyObject *o, void *spec)
{
    const mg_py_int_spec *s = spec;
    if (!PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.100s", s->name, Py_TYPE(o)->tp_name);
        return 0;
    }
    PyObject *v = PyNumber_Index(o);
    if (!v)
        return 0;
    long long tlo, thi;
    unsigned long long uhi;
    kind_range(s->kind, &tlo, &thi, &uhi);
    int ok = 0;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && !overflow && PyErr_Occurred())
        goto done;
    if (uhi > 0) { /* unsigned destinations: the range may exceed a long long */
        unsigned long long hi = s->hi < 0 ? uhi : (unsigned long long)s->hi, u = (unsigned long long)x;
        if (overflow < 0 || (!overflow && x < 0)) { /* negative: outside every unsigned type */
            refuse(s, v, 0, uhi);
            goto done;
        }
        if (overflow) {
            u = PyLong_AsUnsignedLongLong(v);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_OverflowError))
                    goto done;
                PyErr_Clear();
                refuse(s, v, 0, uhi);
                goto done;
            }
        }
        if (u > uhi || u < (unsigned long long)(s->lo > 0 ? s->lo : 0) || u > hi) {
            refuse(s, v, u <= uhi, uhi);
            goto done;
        }
        switch (s->kind) {
        case MG_PY_K_UINT:
            *(unsigned int *)s->out = (unsigned int)u;
            break;
        case MG_PY_K_ULONG:
            *(unsigned long *)s->out = (unsigned long)u;
            break;
        default:
            *(unsigned long long *)s->out = u;
            break;
        }
        ok = 1;
        goto done;
    }
    if (overflow || x < tlo || x > thi || x < s->lo || x > s->hi) {
        refuse(s, v, !overflow && x >= tlo && x <= thi, 0);
        goto done;
    }
    switch (s->kind) {
    case MG_PY_K_INT:
        *(int *)s->out = (int)x;
        break;
    case MG_PY_K_LONG:
        *(long *)s->out = (long)x;
        break;
    default:
        *(long long *)s->out = x;
        break;
    }
    ok = 1;
done:
    Py_DECREF(v);
    return ok;
}

int mg_py_is_complex(PyObject *o)
{
    if (PyComplex_Check(o) || PyArray_IsScalar(o, ComplexFloating))
        return 1;
    return PyArray_Check(o) && PyArray_ISCOMPLEX((PyArrayObject *)o);
}

int mg_py_check_real(PyObject *o, const char *what)
{
    if (PyComplex_Check(o) || PyArray_IsScalar(o, ComplexFloating)) {
        PyErr_Format(PyExc_TypeError, "%s is complex (%R): values must be real", what, o);
        return -1;
    }
    PyObject *raw = NULL;
    if (PyArray_Check(o)) {
        raw = Py_NewRef(o);
    } else if (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o)) {
        /* the array NumPy would make of it (a list of complex numbers is complex too) */
        raw = PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
        if (!raw) {
            PyErr_Clear(); /* not an array at all: the caller's conversion says what it needs */
            return 0;
        }
    } else {
        return 0;
    }
    int cplx = PyArray_ISCOMPLEX((PyArrayObject *)raw);
    if (cplx)
        PyErr_Format(PyExc_TypeError, "%s is complex (dtype %S): values must be real", what,
                     (PyObject *)PyArray_DESCR((PyArrayObject *)raw));
    Py_DECREF(raw);
    return cplx ? -1 : 0;
}

PyObject *mg_py_real_array(PyObject *o, int type, int min_depth, int max_depth, const char *what)
{
    if (mg_py_check_real(o, what) < 0)
        return NULL;
    return PyArray_FROMANY(o, type, min_depth, max_depth, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
}
