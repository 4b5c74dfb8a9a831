/*
 * py_args.h - range-checked integer arguments of the binding: every int parameter parsed in C is
 * refused with its name and the offending value (never a bare "signed integer is greater than
 * maximum", never a value silently taken modulo 2**32 or 2**64).
 *
 * As a PyArg_ParseTuple* "O&" converter (two arguments in the call; the spec is a compound literal,
 * alive for the call):
 *
 *     PyArg_ParseTupleAndKeywords(args, kw, "|O&O&", kwlist, MG_PY_INT("threads", 1, 256, &threads),
 *                                 MG_PY_SEED(&seed))
 *
 * or on an object at hand (a METH_O argument, a tuple item): mg_py_int_conv(o, &MG_PY_INT_SPEC(...))
 * or MG_PY_INT_ARG(o, name, lo, hi, ptr), which return 1 (stored) or 0 (exception set).
 *
 * The destination (int, unsigned int, long, long long, unsigned long long) is picked from the
 * pointer's type.  Refusals:
 *   not an integer (a float, a str, None; bool counts as an int, as with "i"):
 *       TypeError "<name> must be an integer, not <type>"
 *   outside [lo, hi]: "<name> must be in [lo, hi], got <value>", an OverflowError when the value
 *       does not fit the destination's C type, a ValueError otherwise.
 * MG_PY_C_INT(name, ptr) takes the whole range of an int (the core checks the meaning: the messages
 * of both name the parameter).  MG_PY_U64(name, ptr) takes [0, 2**64) into a uint64_t /
 * unsigned long long, MG_PY_SEED(ptr) is MG_PY_U64("seed", ptr): seeds outside [0, 2**64) are refused.
 */
#ifndef MG_BIND_PY_ARGS_H
#define MG_BIND_PY_ARGS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdint.h>

enum mg_py_int_kind { MG_PY_K_INT, MG_PY_K_UINT, MG_PY_K_LONG, MG_PY_K_LLONG, MG_PY_K_ULLONG, MG_PY_K_ULONG };

typedef struct mg_py_int_spec {
    const char *name;
    long long lo, hi;  /* the accepted range (unsigned destinations: hi < 0 means the type's maximum) */
    int kind;          /* enum mg_py_int_kind */
    void *out;
} mg_py_int_spec;

#define MG_PY_INT_KIND(ptr)                                                                                 \
    _Generic((ptr), int *: MG_PY_K_INT, unsigned int *: MG_PY_K_UINT, long *: MG_PY_K_LONG,               \
             long long *: MG_PY_K_LLONG, unsigned long long *: MG_PY_K_ULLONG, unsigned long *: MG_PY_K_ULONG)

#define MG_PY_INT_SPEC(name, lo, hi, ptr)                                                                   \
    ((mg_py_int_spec){(name), (long long)(lo), (long long)(hi), MG_PY_INT_KIND(ptr), (void *)(ptr)})

/* The "O&" converter: 1 with *spec->out set, or 0 with an exception. */
int mg_py_int_conv(PyObject *o, void *spec);

#define MG_PY_INT(name, lo, hi, ptr) mg_py_int_conv, &MG_PY_INT_SPEC(name, lo, hi, ptr)
#define MG_PY_C_INT(name, ptr) MG_PY_INT(name, INT_MIN, INT_MAX, ptr)
#define MG_PY_U64(name, ptr) MG_PY_INT(name, 0, -1, ptr)
#define MG_PY_SEED(ptr) MG_PY_U64("seed", ptr)
#define MG_PY_INT_ARG(o, name, lo, hi, ptr) mg_py_int_conv((o), &MG_PY_INT_SPEC(name, lo, hi, ptr))
#define MG_PY_C_INT_ARG(o, name, ptr) MG_PY_INT_ARG(o, name, INT_MIN, INT_MAX, ptr)

/* A real (not complex) numeric array of `o`, converted to `type` (NPY_FLOAT32, NPY_FLOAT64) with
 * NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST and min_depth..max_depth dimensions; NULL with an
 * exception: TypeError "<what> is complex (dtype <dtype>): values must be real" for a complex array
 * or number (a cast would drop the imaginary part silently), TypeError "<what> must be real numbers,
 * not text" for a str or bytes or an array of them (the cast would parse '0.5'), else the conversion's
 * error.  Returns a
 * PyArrayObject * as PyObject * so that this header needs no NumPy include. */
PyObject *mg_py_real_array(PyObject *o, int type, int min_depth, int max_depth, const char *what);
/* An integer array of `o`, converted to the NumPy integer type `type` (NPY_INT32, NPY_INT64) with
 * NPY_ARRAY_IN_ARRAY and min_depth..max_depth dimensions, for arrays of action ids, lengths and indices:
 * a cast never changes a value.  NULL with an exception: TypeError "<what> must be integers, not an array
 * of dtype <dtype>" for floats (1.5 would become 1), complex numbers, strings ('12' would be parsed),
 * objects (None); OverflowError "<what>: <value> (at flat index <i>) does not fit in <type>" for an
 * integer the cast would wrap (2**32 + 4 to int32: 4); else the conversion's error (the depth).  Bools
 * are integers; an empty sequence (to NumPy float64) is accepted.  With `type` NPY_BOOL (a mask) any
 * integer is a truth value (nonzero: true). */
PyObject *mg_py_int_array(PyObject *o, int type, int min_depth, int max_depth, const char *what);
/* 1 when `o` is a complex number or an array of a complex dtype (no exception either way). */
int mg_py_is_complex(PyObject *o);
/* 0 when `o` is not complex (a real number or array, or anything NumPy makes no array of: the
 * caller's conversion reports those), -1 with the TypeError above for a complex number, a complex
 * array or a sequence NumPy would make a complex array of. */
int mg_py_check_real(PyObject *o, const char *what);

/* Arguments of a METH_FASTCALL | METH_KEYWORDS method (the vectorcall convention: no argument tuple, no keyword
 * dict), parsed without PyArg_ParseTupleAndKeywords' format interpreter:
 *
 *     static const char *const names[] = {"evaluator", "num_simulations", "spec", "max_seconds"};
 *     PyObject *v[4];
 *     if (mg_py_fast_args("search", args, nargs, kwnames, names, 4, 4, 2, v) < 0)
 *         return NULL;
 *
 * sorts the positional arguments and the keyword values into v[0..nnames) by the parameter names, NULL for
 * one not given (borrowed references).  Parameters 0..npos-1 may come by position, the rest only by keyword;
 * the first nreq are required.  -1 with a TypeError naming the function and, where one is at fault, the
 * argument: "search() takes at most 4 positional arguments (5 given)", "search() got an unexpected keyword
 * argument 'foo'", "search() got multiple values for argument 'spec'", "search() missing required argument
 * 'num_simulations' (pos 2)". */
int mg_py_fast_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    const char *const *names, int nnames, int npos, int nreq, PyObject **out);

/* A real number argument (PyArg's "d": a float, an int, anything with __float__ or __index__): 1 with *out
 * set, or 0 with TypeError "<fname>(): <name> must be a real number, not <type>" (or the conversion's own
 * error: OverflowError for an int too large for a double). */
int mg_py_double_arg(PyObject *o, const char *fname, const char *name, double *out);

#endif
