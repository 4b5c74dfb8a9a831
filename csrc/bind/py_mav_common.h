/*
 * py_mav_common.h - argument converters shared by the bindings of the MAV text format
 * (py_mav_write.c, py_mav_parse.c, py_mav_metrics.c, py_tokenizer.c, py_examples.c): texts,
 * games, reference states, token-row batches, annotations.  They only convert; the format
 * itself is csrc/format.  Also the loading of a weight file shared by the bindings of the
 * native networks (py_model.c's MavEngine, py_policy_net.c's PolicyNet).
 */
#ifndef MG_BIND_PY_MAV_COMMON_H
#define MG_BIND_PY_MAV_COMMON_H

#include "state.h"
#include "py_args.h"

#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL MG_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include "../format/mav.h"
#include "../format/tokenizer.h"

/* The arguments of the text readers: (game, text, board_size=0, flags=0) for
 * mav_state_to_game_text, (game, text, true_state=None, board_size=0, flags=0) for mav_parse. */
typedef struct mg_py_reader_args {
    const mg_game *g;
    const char *text;
    Py_ssize_t n;
    mg_config cfg;
    const void *ref; /* the true_state's state, or NULL */
} mg_py_reader_args;

/* The name of element i of a sequence argument ("states[3]"), for error messages. */
typedef struct mg_py_arg_name {
    char s[64];
} mg_py_arg_name;

/* A batch: the B items of a sequence argument, and their token rows, stored one after another,
 * with their lengths (an int32 array). */
typedef struct mg_py_rows {
    PyObject *seq;
    Py_ssize_t B;
    int32_t *buf;
    size_t cap, used, longest;
    PyObject *lens;
    int32_t *L;
} mg_py_rows;

/* An annotation from Python: actions (int32 array-like or None), values (float64 array-like). */
typedef struct mg_py_ann {
    PyArrayObject *acts, *vals;
    int n;
} mg_py_ann;

/* UTF-8 bytes of a str or bytes object.  A NUL inside is kept (the length goes with the text):
 * these are MAV texts and model outputs, which the parser, the metrics and the tokenizer take
 * as data and report on (a parse issue, an unknown character) rather than refuse as arguments. */
const char *mg_py_data_arg(PyObject *o, Py_ssize_t *n, const char *what);

/* A game argument: a game name or a State (its game), of a game the MAV format supports; NULL with
 * TypeError/ValueError otherwise. */
const mg_game *mg_py_mav_game_arg(PyObject *o);

/* A State argument that must be of game g (the game of `other`): the state, or NULL with a
 * TypeError/ValueError naming `what`. */
mg_py_state *mg_py_game_state_arg(PyObject *o, const mg_game *g, const char *what, const char *other);

/* Reference state argument: None or a State of game g (its configuration then replaces *cfg). */
int mg_py_ref_arg(PyObject *o, const mg_game *g, const void **ref, mg_config *cfg, const char *what);

/* Parse the text readers' arguments (with_ref: mav_parse's true_state too); 0, or -1 with an exception. */
int mg_py_reader_args_parse(PyObject *args, PyObject *kw, int with_ref, mg_py_reader_args *a);

/* "seq[i] field" (field may be NULL). */
mg_py_arg_name mg_py_item_name(const char *seq, Py_ssize_t i, const char *field);

/* max_len argument: None (-1 in *max_len) or an int >= lo; 0, or -1 with an error naming it. */
int mg_py_max_len_arg(PyObject *ml, Py_ssize_t lo, Py_ssize_t *max_len);

/* A PyMem buffer of `size`-byte elements (NULL: none yet) grown, at least doubling, to hold `need`
 * of them: the buffer (buf itself when it is large enough), or NULL with MemoryError, buf and
 * *cap unchanged. */
void *mg_py_reserve(void *buf, size_t *cap, size_t need, size_t size);

/* 0, or -1 with a TypeError `not_seq` when items is not a sequence (mg_py_rows_free it either way). */
int mg_py_rows_init(mg_py_rows *r, PyObject *items, const char *not_seq);

/* Room for up to n more tokens: where the next row starts, or NULL with MemoryError. */
int32_t *mg_py_rows_room(mg_py_rows *r, size_t n);

/* Row i (written at mg_py_rows_room) has k tokens. */
void mg_py_rows_end(mg_py_rows *r, Py_ssize_t i, size_t k);

/* The rows as a [B, width] int32 array padded with zeros (<pad>). */
PyObject *mg_py_rows_array(const mg_py_rows *r, npy_intp width);

/* (ids[B, width], lengths[B]); width -1: the longest row. */
PyObject *mg_py_rows_result(const mg_py_rows *r, npy_intp width);

void mg_py_rows_free(mg_py_rows *r);

/* MAV commands (a str such as '%state %top_all %best_action') for game g into *spec; 0, or -1 with an exception. */
int mg_py_spec_arg(const mg_game *g, PyObject *o, mg_mav_spec *spec);

/* The previous state of `s` from its history (copy, then unmake its last move). */
int mg_py_prev_from_history(const mg_py_state *s, unsigned char *prev, int32_t *action);

void mg_py_ann_clear(mg_py_ann *a);

/* actions and values (both None: no annotation) as arrays of equal length; 0, or -1 with an exception. */
int mg_py_ann_arg(PyObject *acts, PyObject *vals, mg_py_ann *a);

/* The prompt of states[i] for the commands `cmds` into buf, *g and *spec following the state's
 * game (the transition form from the state's last move): its length, or -1 with an error naming
 * states[i]. */
long mg_py_state_prompt(PyObject *seq, Py_ssize_t i, PyObject *cmds, const mg_game **g, mg_mav_spec *spec,
                         char *buf, size_t cap);

/* ---- weight files ------------------------------------------------------------------------ */

/* A loader of csrc/model (mg_model_load_file, mg_policy_net_load_buffer, ...) over the caller's object:
 * MG_OK, or MG_ERR with a message (which names the file, the tensor and the value). */
typedef int (*mg_py_load_path_fn)(void *obj, const char *path, char *err, size_t errlen);
typedef int (*mg_py_load_bytes_fn)(void *obj, const uint8_t *buf, size_t len, char *err, size_t errlen);

/* Load obj's weights from `src` with the GIL released: a path (str, bytes or os.PathLike) through
 * from_path, or, where from_bytes is given, the bytes of a buffer object other than a str through
 * from_bytes.  0, or -1 with the exception: the path conversion's, or ValueError with the loader's
 * message. */
int mg_py_load_weights(PyObject *src, mg_py_load_path_fn from_path, mg_py_load_bytes_fn from_bytes, void *obj);

/* mavgame._core.MavTokenizer (py_tokenizer.c), also taken by mav_prompt_tokens and the example builder. */
typedef struct mg_py_tok {
    PyObject_HEAD
    mg_tokenizer *t;
} mg_py_tok;

extern PyTypeObject mg_py_tok_type;

#define TOK_CHECK(self)                                                                        \
    do {                                                                                       \
        if (!(self)->t) {                                                                      \
            PyErr_SetString(PyExc_ValueError, "tokenizer is not initialised");                 \
            return NULL;                                                                       \
        }                                                                                      \
    } while (0)

#endif
