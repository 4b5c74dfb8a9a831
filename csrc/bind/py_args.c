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
    PyObject *v = PyLong_CheckExact(o) ? Py_NewRef(o) : PyNumber_Index(o); /* an int needs no __index__ call */
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

int mg_py_fast_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    const char *const *names, int nnames, int npos, int nreq, PyObject **out)
{
    if (nargs > npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d %sargument%s (%zd given)", fname, npos,
                     npos < nnames ? "positional " : "", npos == 1 ? "" : "s", nargs);
        return -1;
    }
    for (int i = 0; i < nnames; i++)
        out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        /* the vectorcall protocol gives str keys; the names are ASCII */
        while (j < nnames && PyUnicode_CompareWithASCIIString(key, names[j]) != 0)
            j++;
        if (j == nnames) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fname, key);
            return -1;
        }
        if (out[j]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname, names[j]);
            return -1;
        }
        out[j] = args[nargs + k];
    }
    for (int i = 0; i < nreq; i++)
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", fname, names[i], i + 1);
            return -1;
        }
    return 0;
}

int mg_py_double_arg(PyObject *o, const char *fname, const char *name, double *out)
{
    if (PyFloat_CheckExact(o)) {
        *out = PyFloat_AS_DOUBLE(o);
        return 1;
    }
    if (!PyFloat_Check(o) && !PyIndex_Check(o) && !(Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s must be a real number, not %.100s", fname, name, Py_TYPE(o)->tp_name);
        return 0;
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred())
        return 0;
    *out = v;
    return 1;
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
    /* text is no number: the forced cast would parse '0.5' (a str, or an array or list of them) */
    int text = PyUnicode_Check(o) || PyBytes_Check(o);
    if (!text && (PyArray_Check(o) || PySequence_Check(o))) {
        PyArrayObject *raw = (PyArrayObject *)PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
        if (!raw)
            PyErr_Clear();  /* not an array at all: the conversion below says so */
        else
            text = PyArray_ISSTRING(raw);
        Py_XDECREF(raw);
    }
    if (text) {
        PyErr_Format(PyExc_TypeError, "%s must be real numbers, not text (%.100s)", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    return PyArray_FROMANY(o, type, min_depth, max_depth, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
}

/* -1 with an OverflowError naming `what`, the value and its flat index if an entry of the integer array `a`
 * (kind 'i' or 'u') lies outside the range of NumPy integer type `type`; else 0. */
static int check_int_range(PyArrayObject *a, int type, const char *what)
{
    PyArray_Descr *to = PyArray_DescrFromType(type);
    if (!to)
        return -1;
    int safe = PyArray_CanCastTo(PyArray_DESCR(a), to);
    int bits = 8 * (int)PyDataType_ELSIZE(to);
    Py_DECREF(to);
    if (safe)
        return 0;
    int is_unsigned = PyTypeNum_ISUNSIGNED(type), from_unsigned = PyArray_ISUNSIGNED(a);
    /* the target's range as [lo, hi] (hi as an unsigned value) */
    long long lo = is_unsigned ? 0 : (bits >= 64 ? LLONG_MIN : -(1LL << (bits - 1)));
    unsigned long long hi = bits >= 64 ? (is_unsigned ? ULLONG_MAX : (unsigned long long)LLONG_MAX)
                                       : (1ULL << (bits - (is_unsigned ? 0 : 1))) - 1;
    PyArrayObject *w = (PyArrayObject *)PyArray_FROMANY((PyObject *)a, from_unsigned ? NPY_UINT64 : NPY_INT64, 0, 0,
                                                        NPY_ARRAY_CARRAY_RO);
    if (!w)
        return -1;
    npy_intp n = PyArray_SIZE(w);
    int rc = 0;
    for (npy_intp i = 0; i < n && rc == 0; i++) {
        char v[32];
        if (from_unsigned) {
            unsigned long long x = ((const npy_uint64 *)PyArray_DATA(w))[i];
            if (x > hi) {
                snprintf(v, sizeof v, "%llu", x);
                rc = -1;
            }
        } else {
            long long x = ((const npy_int64 *)PyArray_DATA(w))[i];
            if (x < lo || (x > 0 && (unsigned long long)x > hi)) {
                snprintf(v, sizeof v, "%lld", x);
                rc = -1;
            }
        }
        if (rc < 0) {
            PyObject *tn = (PyObject *)PyArray_DescrFromType(type);
            if (tn)
                PyErr_Format(PyExc_OverflowError, "%s: %s (at flat index %zd) does not fit in %S", what, v,
                             (Py_ssize_t)i, tn);
            Py_XDECREF(tn);
        }
    }
    Py_DECREF(w);
    return rc;
}

PyObject *mg_py_int_array(PyObject *o, int type, int min_depth, int max_depth, const char *what)
{
    /* the array NumPy makes of `o` as it is (no cast), to see what it holds */
    PyArrayObject *raw = (PyArrayObject *)PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (!raw) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_TypeError))
            return NULL;
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be an array of integers, not %.100s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    char kind = PyArray_DESCR(raw)->kind;
    /* an empty list is a float64 array to NumPy: with no values there is nothing a cast could change */
    int ok = kind == 'b' || kind == 'i' || kind == 'u' || (kind == 'f' && PyArray_SIZE(raw) == 0);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s must be integers, not an array of dtype %S%s", what,
                     (PyObject *)PyArray_DESCR(raw),
                     kind == 'f' ? " (a float would be truncated)" : kind == 'c' ? " (complex)" : "");
        Py_DECREF(raw);
        return NULL;
    }
    /* (a mask, NPY_BOOL: any integer is a truth value, nonzero true, as in Python) */
    if ((kind == 'i' || kind == 'u') && type != NPY_BOOL && check_int_range(raw, type, what) < 0) {
        Py_DECREF(raw);
        return NULL;
    }
    /* every value fits: the forced cast (int64 to int32, say) changes none */
    PyObject *a = PyArray_FROMANY((PyObject *)raw, type, min_depth, max_depth,
                                  NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(raw);
    return a;
}
