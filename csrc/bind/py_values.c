/*
 * py_values.c - Python binding of the MAV value scale (csrc/format/values.h): centipawns to win
 * probability, the 64 value buckets and scoring of bucket distributions, element-wise on arrays.
 */
#include "py_mav_common.h"

#include <math.h>
#include <string.h>

#include "../format/values.h"

/* An element-wise function's argument as an array of in_type (converted with `flags`) and its
 * result, an array of out_type of the same shape: 0, or -1 with a TypeError "<needs>, got <type>". */
static int map_arrays(PyObject *arg, int in_type, int flags, int out_type, const char *needs, PyArrayObject **a,
                      PyObject **out)
{
    *a = NULL;
    if (in_type != NPY_INT64 && mg_py_check_real(arg, needs) < 0) /* complex: the cast would drop the imaginary part */
        return -1;
    *a = (PyArrayObject *)PyArray_FROMANY(arg, in_type, 0, 0, flags);
    if (!*a) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s, got %.100s", needs, Py_TYPE(arg)->tp_name);
        return -1;
    }
    *out = PyArray_NewLikeArray(*a, NPY_CORDER, PyArray_DescrFromType(out_type), 0);
    if (!*out) {
        Py_CLEAR(*a);
        return -1;
    }
    return 0;
}

#define MAP_CAST (NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST)

/* win_prob_from_cp: NaN is refused (it has no win probability; it used to come back as NaN), +-inf are
 * the limits 1 and 0 (mate-like scores). */
static PyObject *py_win_prob_cp(PyObject *Py_UNUSED(m), PyObject *arg)
{
    PyArrayObject *a;
    PyObject *out;
    if (map_arrays(arg, NPY_FLOAT64, MAP_CAST, NPY_FLOAT64, "win_prob_from_cp needs real numbers", &a, &out) < 0)
        return NULL;
    npy_intp n = PyArray_SIZE(a);
    const double *x = PyArray_DATA(a);
    double *y = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp i = 0; i < n; i++) {
        if (isnan(x[i])) {
            if (PyArray_NDIM(a) == 0)
                PyErr_SetString(PyExc_ValueError, "win_prob_from_cp: centipawns nan have no win probability");
            else
                PyErr_Format(PyExc_ValueError, "win_prob_from_cp: centipawns nan (at flat index %zd) have no win "
                             "probability", (Py_ssize_t)i);
            Py_DECREF(a);
            Py_DECREF(out);
            return NULL;
        }
        y[i] = mg_mav_win_prob_cp(x[i]);
    }
    Py_DECREF(a);
    return out;
}

static PyObject *py_bucket(PyObject *Py_UNUSED(m), PyObject *arg)
{
    PyArrayObject *a;
    PyObject *out;
    if (map_arrays(arg, NPY_FLOAT64, MAP_CAST, NPY_INT32, "bucket needs win probabilities", &a, &out) < 0)
        return NULL;
    npy_intp n = PyArray_SIZE(a);
    const double *x = PyArray_DATA(a);
    int32_t *y = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp i = 0; i < n; i++) {
        if (!(x[i] >= 0.0 && x[i] <= 1.0)) {
            char v[40];
            snprintf(v, sizeof v, "%g", x[i]);
            PyErr_Format(PyExc_ValueError, "win probability %s is not in [0, 1] (at flat index %zd)", v,
                         (Py_ssize_t)i);
            Py_DECREF(a);
            Py_DECREF(out);
            return NULL;
        }
        y[i] = mg_mav_bucket(x[i]);
    }
    Py_DECREF(a);
    return out;
}

static PyObject *py_bucket_value(PyObject *Py_UNUSED(m), PyObject *arg)
{
    PyArrayObject *a;
    PyObject *out;
    if (map_arrays(arg, NPY_INT64, NPY_ARRAY_IN_ARRAY, NPY_FLOAT64, "bucket_value needs integer bucket indices", &a,
                   &out) < 0)
        return NULL;
    npy_intp n = PyArray_SIZE(a);
    const int64_t *x = PyArray_DATA(a);
    double *y = PyArray_DATA((PyArrayObject *)out);
    for (npy_intp i = 0; i < n; i++) {
        if (x[i] < 0 || x[i] >= MG_MAV_BUCKETS) {
            PyErr_Format(PyExc_ValueError, "bucket %lld is not in 0..63", (long long)x[i]);
            Py_DECREF(a);
            Py_DECREF(out);
            return NULL;
        }
        y[i] = mg_mav_bucket_value((int)x[i]);
    }
    Py_DECREF(a);
    return out;
}

/* mav_score(dist[..., 64], method, logits) -> values[...] */
static PyObject *py_score(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyObject *arg, *method_o;
    int logits = 0;
    if (!PyArg_ParseTuple(args, "OO|p:mav_score", &arg, &method_o, &logits))
        return NULL;
    const char *method = mg_py_text_arg(method_o, "method");
    if (!method)
        return NULL;
    int meth;
    if (strcmp(method, "max") == 0)
        meth = MG_MAV_SCORE_MAX;
    else if (strcmp(method, "mean") == 0)
        meth = MG_MAV_SCORE_MEAN;
    else {
        PyErr_Format(PyExc_ValueError, "scoring method must be 'max' or 'mean', not '%s'", method);
        return NULL;
    }
    if (mg_py_check_real(arg, "mav_score: the distributions") < 0)
        return NULL;
    int f32 = PyArray_Check(arg) && PyArray_TYPE((PyArrayObject *)arg) == NPY_FLOAT32;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(arg, f32 ? NPY_FLOAT32 : NPY_FLOAT64, 1, 0,
                                                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST);
    if (!a)
        return NULL;
    int nd = PyArray_NDIM(a);
    if (PyArray_DIM(a, nd - 1) != MG_MAV_BUCKETS) {
        PyErr_Format(PyExc_ValueError, "distributions need a last axis of 64 buckets, got %zd",
                     (Py_ssize_t)PyArray_DIM(a, nd - 1));
        Py_DECREF(a);
        return NULL;
    }
    npy_intp dims[NPY_MAXDIMS];
    size_t rows = 1;
    for (int i = 0; i < nd - 1; i++) {
        dims[i] = PyArray_DIM(a, i);
        rows *= (size_t)dims[i];
    }
    PyObject *out = PyArray_SimpleNew(nd - 1, dims, NPY_FLOAT64);
    if (!out) {
        Py_DECREF(a);
        return NULL;
    }
    char err[MG_ERRLEN] = "";
    long rc;
    double *y = PyArray_DATA((PyArrayObject *)out);
    Py_BEGIN_ALLOW_THREADS
    rc = f32 ? mg_mav_score_f32(PyArray_DATA(a), rows, 64, meth, logits, y, err, sizeof err)
             : mg_mav_score(PyArray_DATA(a), rows, 64, meth, logits, y, err, sizeof err);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    if (rc < 0) {
        Py_DECREF(out);
        PyErr_Format(PyExc_ValueError, "bad distribution: %s", err);
        return NULL;
    }
    return out;
}

static PyMethodDef values_functions[] = {
    {"mav_win_prob_cp", py_win_prob_cp, METH_O, "mav_win_prob_cp(cp) -> float64 array"},
    {"mav_bucket", py_bucket, METH_O, "mav_bucket(p) -> int32 array"},
    {"mav_bucket_value", py_bucket_value, METH_O, "mav_bucket_value(b) -> float64 array"},
    {"mav_score", py_score, METH_VARARGS, "mav_score(dist[..., 64], method, logits=False) -> float64 array"},
    {NULL, NULL, 0, NULL},
};

int mg_bind_values(PyObject *m) { return PyModule_AddFunctions(m, values_functions); }
