/*
 * py_mav_parse.c - Python binding of the MAV parser (csrc/format/mav_parse.c): mav_parse()
 * returns a typed result, mavgame._core.MavParseResult (a struct sequence with named fields),
 * with MavStateSlot and MavParseReference inside.  mavgame/mav/parse.py ParseResult is built from it.
 */
#include "py_mav_common.h"

#include <string.h>

static const char *const STATUS_NAMES[] = {"legal", "illegal", "malformed", "unchecked"};

/* ---- the result types --------------------------------------------------------------------- */

static PyStructSequence_Field slot_fields[] = {
    {"present", "the slot's line is in the text"},
    {"valid", "its state parsed"},
    {"is_input", "it is an input (prompt) line"},
    {"correct", "equal to the reference (None: no reference or not present)"},
    {"text", "the game's own text of the parsed state ('' if invalid)"},
    {"ref_text", "the game's own text of the reference state ('' if unknown)"},
    {NULL, NULL},
};

static PyStructSequence_Desc slot_desc = {"mavgame._core.MavStateSlot", "A state slot of a parsed MAV text.",
                                          slot_fields, 6};

static PyStructSequence_Field ref_fields[] = {
    {"ref_n_legal", "legal moves in the reference state"},
    {"ref_result", "the reference state's result ('*' if not over)"},
    {"n_illegal", "%top moves of the game not legal there"},
    {"n_malformed", "%top entries that are not moves of the game"},
    {"n_duplicate", "repeated %top moves"},
    {"n_missing", "moves the %top line should have listed but did not"},
    {"n_correct", "distinct legal moves listed"},
    {"count_expected", "moves the %top line should list"},
    {"outcome_correct", "whether the terminal/outcome claim is right (None: unknown)"},
    {"missing_actions", "int32 array of the missing actions (when the line should list every legal move)"},
    {"missing", "the missing moves as strings"},
    {NULL, NULL},
};

static PyStructSequence_Desc ref_desc = {"mavgame._core.MavParseReference",
                                         "The hallucination report of a MAV text against its reference state.",
                                         ref_fields, 11};

static PyStructSequence_Field result_fields[] = {
    {"game", "the game's name ('' if unknown)"},
    {"ok", "no format errors"},
    {"header_ok", "the header line parsed"},
    {"complete", "every header command had its line"},
    {"issues", "list of (line, col, message), at most 24"},
    {"n_issues", "format errors found (may exceed len(issues))"},
    {"header", "the canonical header (None if it did not parse)"},
    {"n_inputs", "input lines of the header's commands"},
    {"transition", "the commands start with a previous state"},
    {"prev", "MavStateSlot of %prev_state / %prev_fen"},
    {"cur", "MavStateSlot of %state / %fen"},
    {"after", "MavStateSlot of the state after the best action"},
    {"prev_action", "the %prev_action text"},
    {"prev_action_id", "its legal action in the previous state, or -1"},
    {"top_present", "a %top line is present"},
    {"top_k", "k of the header's %top (0: %top_all)"},
    {"outcome", "the result named by an `invalid : \"...\"` %top line, else None"},
    {"top_outcome", "the %top line is an outcome line"},
    {"top_moves", "the %top entries' move texts"},
    {"top_table", "int32 array [n, 6]: action, bucket, status code, duplicate, line, col"},
    {"best_present", "a %best_action line is present"},
    {"best_invalid", "%best_action is `invalid` (terminal state)"},
    {"best", "the %best_action text"},
    {"best_id", "its legal action in the reference state, or -1"},
    {"best_status", "'legal', 'illegal', 'malformed', 'unchecked' ('' if absent or invalid)"},
    {"reference", "MavParseReference, or None without a reference state"},
    {NULL, NULL},
};

static PyStructSequence_Desc result_desc = {"mavgame._core.MavParseResult",
                                            "mav_parse()'s result: the content of a MAV text (see mavgame.mav.ParseResult).",
                                            result_fields, 26};

static PyTypeObject slot_type, ref_type, result_type;

/* ---- conversion ------------------------------------------------------------------------------ */

static PyObject *none_ref(void)
{
    Py_INCREF(Py_None);
    return Py_None;
}

static PyObject *tri(int v) { return v < 0 ? none_ref() : PyBool_FromLong(v); }

/* Text that may hold arbitrary bytes copied from model output (invalid UTF-8 replaced). */
static PyObject *ustr(const char *s) { return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace"); }

/* A struct sequence of `type` from n new references (any NULL: all released, NULL returned). */
static PyObject *struct_of(PyTypeObject *type, PyObject **it, int n)
{
    PyObject *t = NULL;
    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= it[i] != NULL;
    if (ok)
        t = PyStructSequence_New(type);
    if (!t) {
        for (int i = 0; i < n; i++)
            Py_XDECREF(it[i]);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        PyStructSequence_SET_ITEM(t, i, it[i]);
    return t;
}

static PyObject *slot_of(const mg_mav_slot *s)
{
    PyObject *it[] = {PyBool_FromLong(s->present), PyBool_FromLong(s->valid), PyBool_FromLong(s->is_input),
                      tri(s->correct), ustr(s->valid ? s->text : ""), ustr(s->ref_text)};
    return struct_of(&slot_type, it, 6);
}

static PyObject *issues_list(const mg_mav_result *r)
{
    PyObject *issues = PyList_New(0);
    for (int i = 0; issues && i < r->n_issues && i < MG_MAV_MAX_ISSUES; i++) {
        PyObject *t = Py_BuildValue("(iiN)", r->issues[i].line, r->issues[i].col, ustr(r->issues[i].msg));
        if (!t || PyList_Append(issues, t) < 0)
            Py_CLEAR(issues);
        Py_XDECREF(t);
    }
    return issues;
}

/* The %top entries' move texts. */
static PyObject *top_moves(const mg_mav_result *r)
{
    PyObject *names = PyList_New(r->n_moves);
    for (int i = 0; names && i < r->n_moves; i++) {
        const mg_mav_move *mv = &r->moves[i];
        PyObject *u = PyUnicode_DecodeUTF8(mv->move, (Py_ssize_t)mv->len, "replace"); /* NUL bytes kept */
        if (!u)
            Py_CLEAR(names);
        else
            PyList_SET_ITEM(names, i, u);
    }
    return names;
}

/* The %top entries as an int32 array [n, 6] of action, bucket, status code, duplicate, line, col. */
static PyObject *top_table(const mg_mav_result *r)
{
    npy_intp dims[2] = {r->n_moves, 6};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_INT32);
    if (!arr)
        return NULL;
    int32_t *d = PyArray_DATA((PyArrayObject *)arr);
    for (int i = 0; i < r->n_moves; i++) {
        const mg_mav_move *mv = &r->moves[i];
        int32_t *row = d + 6 * i;
        row[0] = mv->action;
        row[1] = mv->bucket;
        row[2] = mv->status;
        row[3] = mv->duplicate;
        row[4] = mv->line;
        row[5] = mv->col;
    }
    return arr;
}

static PyObject *reference_of(const mg_mav_result *r)
{
    if (!r->has_ref)
        return none_ref();
    npy_intp nm = r->n_missing_listed;
    PyObject *miss = PyArray_SimpleNew(1, &nm, NPY_INT32);
    if (miss && nm)
        memcpy(PyArray_DATA((PyArrayObject *)miss), r->missing, (size_t)nm * sizeof(int32_t));
    PyObject *mstr = PyList_New(nm);
    for (npy_intp i = 0; mstr && i < nm; i++) {
        char b[MG_MAX_MOVE_STR];
        size_t l = r->game->action_to_str(r->ref, r->missing[i], b, sizeof b);
        PyObject *u = PyUnicode_FromStringAndSize(b, (Py_ssize_t)l);
        if (!u)
            Py_CLEAR(mstr);
        else
            PyList_SET_ITEM(mstr, i, u);
    }
    PyObject *it[] = {PyLong_FromLong(r->ref_n_legal), PyUnicode_FromString(mg_result_string(r->ref_outcome)),
                      PyLong_FromLong(r->n_illegal), PyLong_FromLong(r->n_malformed), PyLong_FromLong(r->n_duplicate),
                      PyLong_FromLong(r->n_missing), PyLong_FromLong(r->n_correct), PyLong_FromLong(r->count_expected),
                      tri(r->outcome_correct), miss, mstr};
    return struct_of(&ref_type, it, 11);
}

static PyObject *result_of(const mg_mav_result *r)
{
    PyObject *header;
    if (r->header_ok) {
        char h[512];
        mg_mav_header(r->game, &r->spec, h, sizeof h);
        header = PyUnicode_FromString(h);
    } else {
        header = none_ref();
    }
    PyObject *it[] = {
        PyUnicode_FromString(r->game ? r->game->name : ""),
        PyBool_FromLong(r->ok),
        PyBool_FromLong(r->header_ok),
        PyBool_FromLong(r->complete),
        issues_list(r),
        PyLong_FromLong(r->n_issues),
        header,
        PyLong_FromLong(r->header_ok ? r->spec.n_inputs : 0),
        PyBool_FromLong(r->header_ok && r->spec.transition),
        slot_of(&r->slot[MG_MAV_SLOT_PREV]),
        slot_of(&r->slot[MG_MAV_SLOT_CUR]),
        slot_of(&r->slot[MG_MAV_SLOT_AFTER]),
        ustr(r->prev_action),
        PyLong_FromLong(r->prev_action_id),
        PyBool_FromLong(r->top_present),
        PyLong_FromLong(r->top_k),
        r->top_outcome && r->outcome != MG_ONGOING ? PyUnicode_FromString(mg_result_string(r->outcome)) : none_ref(),
        PyBool_FromLong(r->top_outcome),
        top_moves(r),
        top_table(r),
        PyBool_FromLong(r->best_present),
        PyBool_FromLong(r->best_invalid),
        ustr(r->best),
        PyLong_FromLong(r->best_id),
        PyUnicode_FromString(r->best_present && !r->best_invalid ? STATUS_NAMES[r->best_status] : ""),
        reference_of(r),
    };
    return struct_of(&result_type, it, 26);
}

/* mav_parse(game, text, true_state=None, board_size=0, flags=0) -> MavParseResult */
static PyObject *py_mav_parse(PyObject *Py_UNUSED(m), PyObject *args, PyObject *kw)
{
    mg_py_reader_args a;
    if (mg_py_reader_args_parse(args, kw, 1, &a) < 0)
        return NULL;
    /* on the stack (about 50 KB): a heap block this size is returned to the system and faulted
     * in again on every call */
    mg_mav_result res;
    mg_mav_parse(a.g, &a.cfg, a.text, (size_t)a.n, a.ref, &res);
    return result_of(&res);
}

/* mav_top_entries(entry_type, status_names, top_moves, top_table) -> list of entry_type
 * The %top entries of a MavParseResult as instances of entry_type (a tuple subclass of 7 fields, e.g.
 * mavgame.mav.MoveEntry: move, action, bucket, status, duplicate, line, col), filled without calling its
 * Python-level __new__ (the cost of ParseResult.top was mostly that call and the NumPy tolist). */
static PyObject *py_mav_top_entries(PyObject *Py_UNUSED(m), PyObject *args)
{
    PyTypeObject *type;
    PyObject *status, *moves, *table;
    if (!PyArg_ParseTuple(args, "O!O!O!O:mav_top_entries", &PyType_Type, &type, &PyTuple_Type, &status, &PyList_Type,
                          &moves, &table))
        return NULL;
    if (!PyType_IsSubtype(type, &PyTuple_Type)) {
        PyErr_Format(PyExc_TypeError, "mav_top_entries: entry_type must be a tuple subclass, got %R", (PyObject *)type);
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(moves), ns = PyTuple_GET_SIZE(status);
    PyArrayObject *a = (PyArrayObject *)table;
    if (!PyArray_Check(table) || PyArray_TYPE(a) != NPY_INT32 || PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) != n ||
        PyArray_DIM(a, 1) != 6 || !PyArray_IS_C_CONTIGUOUS(a)) {
        PyErr_Format(PyExc_ValueError, "mav_top_entries: top_table must be a C-contiguous int32 array [%zd, 6], got %R",
                     n, table);
        return NULL;
    }
    const int32_t *d = PyArray_DATA(a);
    const int untrack = type->tp_dictoffset == 0 && PyType_IS_GC(type);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        const int32_t *row = d + 6 * i;
        if (row[2] < 0 || row[2] >= ns) {
            PyErr_Format(PyExc_ValueError, "mav_top_entries: status code %d of entry %zd out of range", (int)row[2], i);
            Py_CLEAR(out);
            break;
        }
        PyObject *st = PyTuple_GET_ITEM(status, row[2]);
        Py_INCREF(st);
        PyObject *mv = PyList_GET_ITEM(moves, i);
        Py_INCREF(mv);
        PyObject *it[] = {mv, PyLong_FromLong(row[0]), PyLong_FromLong(row[1]), st, PyBool_FromLong(row[3]),
                          PyLong_FromLong(row[4]), PyLong_FromLong(row[5])};
        int ok = 1;
        for (int k = 0; k < 7; k++)
            ok &= it[k] != NULL;
        PyObject *e = ok ? type->tp_alloc(type, 7) : NULL;
        if (!e) {
            for (int k = 0; k < 7; k++)
                Py_XDECREF(it[k]);
            Py_CLEAR(out);
            break;
        }
        for (int k = 0; k < 7; k++)
            PyTuple_SET_ITEM(e, k, it[k]);
        /* only atoms inside (str, int, bool) and no instance dict: it can be in no reference cycle, so it
         * leaves the cyclic GC's lists as CPython's own tuples of atoms do (the collections this many young
         * objects trigger otherwise cost more than building them) */
        if (untrack && PyUnicode_CheckExact(mv))
            PyObject_GC_UnTrack(e);
        PyList_SET_ITEM(out, i, e);
    }
    return out;
}

static PyMethodDef parse_functions[] = {
    {"mav_parse", (PyCFunction)(void (*)(void))py_mav_parse, METH_VARARGS | METH_KEYWORDS,
     "mav_parse(game, text, true_state=None, board_size=0, flags=0) -> MavParseResult (see mavgame.mav.ParseResult)"},
    {"mav_top_entries", py_mav_top_entries, METH_VARARGS,
     "mav_top_entries(entry_type, status_names, top_moves, top_table) -> list of entry_type (ParseResult.top)"},
    {NULL, NULL, 0, NULL},
};

int mg_bind_mav_parse(PyObject *m)
{
    if (PyModule_AddFunctions(m, parse_functions) < 0)
        return -1;
    if (PyStructSequence_InitType2(&slot_type, &slot_desc) < 0 || PyStructSequence_InitType2(&ref_type, &ref_desc) < 0 ||
        PyStructSequence_InitType2(&result_type, &result_desc) < 0)
        return -1;
    if (mg_py_add_type(m, "MavStateSlot", &slot_type) < 0 || mg_py_add_type(m, "MavParseReference", &ref_type) < 0 ||
        mg_py_add_type(m, "MavParseResult", &result_type) < 0)
        return -1;
    return 0;
}
