/*
 * py_examples.c - Python binding of the training-example builder (csrc/format/examples.h):
 * mavgame._core.MavExampleBuilder, random MAV examples tokenised with their loss masks.
 */
#include "py_mav_common.h"

#include <string.h>

#include "../format/examples.h"

typedef struct py_exb {
    PyObject_HEAD
    mg_py_tok *tok;
    mg_rng rng;
    mg_mav_example_opts opts;
} py_exb;

static void exb_dealloc(py_exb *self)
{
    Py_XDECREF(self->tok);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int exb_init(py_exb *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tokenizer", "seed", "p_transition", "p_top", "p_top_all", "k_slack", "p_best",
                             "p_after", "p_shuffle", "p_state_only", "p_fen_only", "add_bos", "add_eos",
                             "k_terminal_prev", NULL};
    PyObject *to;
    unsigned long long seed = 0;
    mg_mav_example_opts o;
    mg_mav_example_opts_default(&o);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|O&dddO&dddddppp:MavExampleBuilder", kwlist, &mg_py_tok_type, &to,
                                     MG_PY_SEED(&seed), &o.p_transition, &o.p_top, &o.p_top_all,
                                     MG_PY_C_INT("k_slack", &o.k_slack), &o.p_best,
                                     &o.p_after, &o.p_shuffle, &o.p_state_only, &o.p_fen_only, &o.add_bos,
                                     &o.add_eos, &o.k_terminal_prev))
        return -1;
    char err[MG_ERRLEN];
    if (mg_mav_example_opts_check(&o, err, sizeof err) != MG_OK) {
        mg_py_value_error(err);
        return -1;
    }
    Py_INCREF(to);
    Py_XDECREF(self->tok);
    self->tok = (mg_py_tok *)to;
    self->opts = o;
    mg_rng_seed(&self->rng, seed);
    return 0;
}

/* build(items, max_len=None, return_text=False) with items of
 * (state, actions, values, best, prev_state, prev_action, use_history). */
static PyObject *exb_build(py_exb *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"items", "max_len", "return_text", NULL};
    PyObject *items, *ml = Py_None;
    int return_text = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|Op:build", kwlist, &items, &ml, &return_text))
        return NULL;
    if (!self->tok || !self->tok->t) {
        PyErr_SetString(PyExc_ValueError, "example builder is not initialised");
        return NULL;
    }
    Py_ssize_t max_len;
    if (mg_py_max_len_arg(ml, 1, &max_len) < 0)
        return NULL;
    mg_py_rows r;
    if (mg_py_rows_init(&r, items, "items must be a sequence") < 0) {
        mg_py_rows_free(&r);
        return NULL;
    }
    Py_ssize_t B = r.B;
    const size_t CAP = 32768, TEXT = 262144;
    int32_t *tmp_ids = PyMem_Malloc(CAP * sizeof(int32_t));
    uint8_t *mask = NULL, *tmp_mask = PyMem_Malloc(CAP);
    char *text = PyMem_Malloc(TEXT);
    size_t cap_mask = 0;
    PyObject *texts = return_text ? PyList_New(B) : NULL;
    PyObject *res = NULL;
    if (!tmp_ids || !tmp_mask || !text || (return_text && !texts)) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < B; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(r.seq, i);
        PyObject *so, *acts, *vals, *po;
        int best, prev_action, use_history;
        mg_py_arg_name best_name = mg_py_item_name("items", i, "best"),
                       prev_name = mg_py_item_name("items", i, "prev_action");
        if (!PyTuple_Check(it) ||
            !PyArg_ParseTuple(it, "OOOO&OO&p:items[i]", &so, &acts, &vals, MG_PY_C_INT(best_name.s, &best), &po,
                              MG_PY_C_INT(prev_name.s, &prev_action), &use_history)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "items[%zd] must be a tuple (state, actions, values, best, prev_state, "
                             "prev_action, use_history)", i);
            goto done;
        }
        mg_py_state *s = mg_py_state_arg(so, mg_py_item_name("items", i, "state").s);
        if (!s)
            goto done;
        const mg_game *g = s->game;
        _Alignas(16) unsigned char prevbuf[MG_MAX_STATE];
        mg_mav_input in = {s->state, NULL, -1, 0, NULL, NULL, best, NULL, 0};
        if (po != Py_None) {
            mg_py_state *p = mg_py_game_state_arg(po, g, mg_py_item_name("items", i, "prev_state").s, "state");
            if (!p)
                goto done;
            in.prev = p->state;
            in.prev_action = prev_action;
        } else if (use_history && mg_py_prev_from_history(s, prevbuf, &in.prev_action) == 0) {
            in.prev = prevbuf;
        }
        mg_py_ann ann;
        if (mg_py_ann_arg(acts, vals, &ann) < 0)
            goto done;
        in.n = ann.n;
        in.actions = ann.acts ? PyArray_DATA(ann.acts) : NULL;
        in.values = ann.vals ? PyArray_DATA(ann.vals) : NULL;
        char err[MG_ERRLEN] = "";
        size_t pl = 0;
        long k = mg_mav_example_build(self->tok->t, g, &in, &self->opts, &self->rng, tmp_ids, tmp_mask, CAP, text,
                                      TEXT, &pl, NULL, err, sizeof err);
        mg_py_ann_clear(&ann);
        if (k < 0) {
            PyErr_Format(PyExc_ValueError, "items[%zd]: %s", i, err);
            goto done;
        }
        if (max_len >= 0 && k > max_len) {
            PyErr_Format(PyExc_ValueError, "items[%zd]: the example has %ld tokens, more than max_len=%zd", i, k,
                         max_len);
            goto done;
        }
        if (return_text) {
            size_t tl = strlen(text);
            PyObject *t = Py_BuildValue("(s#s#)", text, (Py_ssize_t)pl, text + pl, (Py_ssize_t)(tl - pl));
            if (!t)
                goto done;
            PyList_SET_ITEM(texts, i, t);
        }
        int32_t *row = mg_py_rows_room(&r, (size_t)k);
        if (!row)
            goto done;
        uint8_t *nm = mg_py_reserve(mask, &cap_mask, r.used + (size_t)k, sizeof *mask);
        if (!nm)
            goto done;
        mask = nm;
        memcpy(row, tmp_ids, (size_t)k * sizeof(int32_t));
        memcpy(mask + r.used, tmp_mask, (size_t)k);
        mg_py_rows_end(&r, i, (size_t)k);
    }
    {
        const int32_t *L = r.L;
        npy_intp dims[2] = {B, max_len >= 0 ? max_len : (npy_intp)r.longest};
        PyObject *IA = mg_py_rows_array(&r, dims[1]);
        PyObject *MA = PyArray_ZEROS(2, dims, NPY_BOOL, 0);
        if (!IA || !MA) {
            Py_XDECREF(IA);
            Py_XDECREF(MA);
            goto done;
        }
        npy_bool *DM = PyArray_DATA((PyArrayObject *)MA);
        size_t off = 0;
        for (Py_ssize_t i = 0; i < B; i++) {
            for (int32_t j = 0; j < L[i]; j++)
                DM[(size_t)i * (size_t)dims[1] + (size_t)j] = mask[off + (size_t)j] != 0;
            off += (size_t)L[i];
        }
        if (return_text)
            res = Py_BuildValue("(NNON)", IA, MA, r.lens, texts);
        else
            res = Py_BuildValue("(NNO)", IA, MA, r.lens);
        texts = NULL;
    }
done:
    mg_py_rows_free(&r);
    PyMem_Free(mask);
    PyMem_Free(tmp_ids);
    PyMem_Free(tmp_mask);
    PyMem_Free(text);
    Py_XDECREF(texts);
    return res;
}

/* Generator state as 4 ints (for checkpointing), and restoring it. */
static PyObject *exb_get_rng_state(py_exb *self, PyObject *Py_UNUSED(ignored))
{
    return Py_BuildValue("(KKKK)", (unsigned long long)self->rng.s[0], (unsigned long long)self->rng.s[1],
                         (unsigned long long)self->rng.s[2], (unsigned long long)self->rng.s[3]);
}

static PyObject *exb_set_rng_state(py_exb *self, PyObject *arg)
{
    unsigned long long s[4];
    if (!PyArg_ParseTuple(arg, "O&O&O&O&:set_rng_state", MG_PY_U64("generator state word 0", &s[0]),
                          MG_PY_U64("generator state word 1", &s[1]), MG_PY_U64("generator state word 2", &s[2]),
                          MG_PY_U64("generator state word 3", &s[3])))
        return NULL;
    if (!(s[0] | s[1] | s[2] | s[3])) {
        PyErr_SetString(PyExc_ValueError, "generator state must not be all zero");
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        self->rng.s[i] = s[i];
    Py_RETURN_NONE;
}

static PyMethodDef exb_methods[] = {
    {"build", (PyCFunction)(void (*)(void))exb_build, METH_VARARGS | METH_KEYWORDS,
     "build(items, max_len=None, return_text=False) -> (ids[B, L] int32, loss_mask[B, L] bool, lengths[B] "
     "int32[, texts])\n\nitems: tuples (state, actions, values, best, prev_state, prev_action, use_history)."},
    {"get_rng_state", (PyCFunction)exb_get_rng_state, METH_NOARGS, "get_rng_state() -> (int, int, int, int)"},
    {"set_rng_state", (PyCFunction)exb_set_rng_state, METH_O, "set_rng_state(state)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject py_exb_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "mavgame._core.MavExampleBuilder",
    .tp_basicsize = sizeof(py_exb),
    .tp_dealloc = (destructor)exb_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "MavExampleBuilder(tokenizer, seed=0, p_transition=0.5, p_top=1, p_top_all=0.25, k_slack=4, p_best=1,\n"
              "                  p_after=0, p_shuffle=1, p_state_only=1/3, p_fen_only=1/3, add_bos=True, add_eos=True,\n"
              "                  k_terminal_prev=False)",
    .tp_methods = exb_methods,
    .tp_init = (initproc)exb_init,
    .tp_new = PyType_GenericNew,
};

int mg_bind_examples(PyObject *m) { return mg_py_add_type(m, "MavExampleBuilder", &py_exb_type); }
