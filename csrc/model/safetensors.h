/*
 * safetensors.h - reader of the safetensors container (an 8-byte little-endian header length,
 * a JSON header, then the raw tensor bytes) over a caller-owned byte buffer.
 *
 * mg_st_parse validates everything the header claims: the header length against the buffer,
 * the JSON, every tensor's dtype, shape (non-negative ints, at most MG_ST_MAX_DIMS) and data
 * offsets (inside the data buffer, byte count = elements x dtype size, no two tensors
 * overlapping), and __metadata__ (strings only).  Errors name the offending tensor or field.
 * The parsed file points into the buffer (tensor data) and owns copies of names and metadata.
 */
#ifndef MG_MODEL_SAFETENSORS_H
#define MG_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_ST_MAX_DIMS 8
#define MG_ST_MAX_HEADER (100u * 1024u * 1024u)

enum mg_st_dtype {
    MG_ST_F64 = 0, MG_ST_F32, MG_ST_F16, MG_ST_BF16, MG_ST_I64, MG_ST_I32, MG_ST_I16, MG_ST_I8,
    MG_ST_U8, MG_ST_U16, MG_ST_U32, MG_ST_U64, MG_ST_BOOL, MG_ST_NDTYPES
};

typedef struct mg_st_tensor {
    char *name;
    int dtype;               /* enum mg_st_dtype */
    int ndim;
    int64_t shape[MG_ST_MAX_DIMS];
    int64_t numel;
    const uint8_t *data;     /* into the caller's buffer */
    size_t nbytes;
    int taken;               /* set by mg_st_take */
} mg_st_tensor;

typedef struct mg_st_file {
    int n_tensors;
    mg_st_tensor *tensors;
    int n_meta;
    char **meta_keys;
    char **meta_values;
} mg_st_file;

/* Name ("F32", ...) and element size of a dtype. */
const char *mg_st_dtype_name(int dtype);
size_t mg_st_dtype_size(int dtype);

/* Parse buf[0..len) into *f (zeroed first).  MG_OK, or MG_ERR with a message (f is then
 * empty and needs no free). */
int mg_st_parse(const uint8_t *buf, size_t len, mg_st_file *f, char *err, size_t errlen);

/* Tensor named `name` or NULL; metadata value of `key` or NULL. */
const mg_st_tensor *mg_st_find(const mg_st_file *f, const char *name);
const char *mg_st_meta(const mg_st_file *f, const char *key);

void mg_st_free(mg_st_file *f);

/* The checks a weight loader makes, worded alike for every loader; `what` names the weights in the
 * messages ("weights", "policy network weights").
 * mg_st_take: the tensor `name`, marked as taken, or NULL with "<what> do not match the config:
 * '<name>' is missing".
 * mg_st_all_taken: MG_OK when every tensor of f was taken, else MG_ERR naming the first other one
 * ("<what> do not match the config: unexpected tensor '<name>'").
 * mg_st_check_weight: MG_OK when t is F32, F16 or BF16 (MG_ERR naming it and its dtype otherwise);
 * *dtype (start at -1) becomes the file's weight dtype: the last non-F32 one seen, F32 when all are. */
const mg_st_tensor *mg_st_take(mg_st_file *f, const char *name, const char *what, char *err, size_t errlen);
int mg_st_all_taken(const mg_st_file *f, const char *what, char *err, size_t errlen);
int mg_st_check_weight(const mg_st_tensor *t, const char *what, int *dtype, char *err, size_t errlen);

/* mg_st_check_finite: MG_OK when every element of the F32, F16 or BF16 tensor t is finite, else MG_ERR
 * naming it, the first non-finite element and its value ("<what, singular> '<name>' holds inf at element
 * 17 ..."): a model with a NaN or infinite weight answers nothing usable (an all-NaN policy, '' from the
 * MAV engine) instead of failing, so the loaders refuse it.  A bit test per element, on the bytes the
 * loader converts next (the pages are read once). */
int mg_st_check_finite(const mg_st_tensor *t, const char *what, char *err, size_t errlen);

/* Element i of a F32, F16 or BF16 tensor as float32 (the caller has checked the dtype). */
float mg_st_float(const mg_st_tensor *t, size_t i);

/* ---- a weight file: the one loading path of every loader (model_file.c, policy_net.c) ------------------
 *
 * A loader opens the file with mg_st_open (the header, then the metadata `format` and `format_version`
 * its mg_st_format names), lists the tensors its config implies (mg_st_want_set: name, exact shape, how
 * many float32 of the loader's arena the converted tensor takes, where its pointer goes) and hands the
 * list to mg_st_load_weights, which makes every check before it allocates (each tensor present, of
 * exactly its shape, F32/F16/BF16; no other tensor), then allocates one zeroed arena, refuses a
 * non-finite weight, converts each tensor with the loader's function and gives a mapped file's pages
 * back as it goes.  Messages name the tensor and the value, in the loader's words (`weights`). */
typedef struct mg_st_format {
    const char *format;   /* the metadata "format" required ("mavgame-mav") */
    const char *version;  /* the metadata "format_version" required ("1") */
    const char *noun;     /* what the file is, for messages: "not a mavgame <noun> (...)" */
    const char *weights;  /* its tensors, for messages ("weights", "policy network weights") */
} mg_st_format;

#define MG_ST_WANT_NAME 64

typedef struct mg_st_want {
    char name[MG_ST_WANT_NAME];
    int ndim;
    int64_t shape[4];
    int kind;             /* the loader's: how its convert function lays the tensor out */
    size_t floats;        /* arena floats the converted tensor takes */
    const float **dst;    /* set to the converted tensor in the arena */
} mg_st_want;

/* mg_st_parse, then the metadata checks: "not a mavgame <noun> (metadata format '<got>', '<format>'
 * expected)", "unsupported <noun> format version '<got>' (<version> expected)".  MG_OK (mg_st_free f
 * afterwards), or MG_ERR with the message (f is then empty). */
int mg_st_open(const uint8_t *buf, size_t len, const mg_st_format *fmt, mg_st_file *f, char *err, size_t errlen);

/* Fill *w: the tensor `name` of shape shape[0..ndim) (ndim <= 4), converted as `kind` into `floats`
 * arena floats (0: as many as it has elements), its address stored in *dst. */
void mg_st_want_set(mg_st_want *w, const char *name, int kind, int ndim, const int64_t *shape, size_t floats,
                    const float **dst);

/* Convert the checked tensor t (of want w) into dst (w->floats floats, zeroed). */
typedef void (*mg_st_convert_fn)(void *ctx, const mg_st_want *w, const mg_st_tensor *t, float *dst);

typedef struct mg_st_weights {
    float *arena;         /* the loader's to free: the converted tensors, then `extra` floats (zeros) */
    float *extra;         /* where the caller's extra floats start */
    size_t n_params;      /* elements of the tensors */
    int dtype;            /* the file's weight dtype (as mg_st_check_weight) */
} mg_st_weights;

/* The checks and the conversion above for the n tensors w[0..n) of f, with `extra` more floats at the end
 * of the arena; `mapped`: the bytes are a read-only file mapping whose converted pages may be released.
 * MG_OK with *out filled, or MG_ERR with a message (nothing allocated then).  The shape message:
 * "<weight> '<name>' has shape (<got>), config says (<expected>)" (1-D shapes as Python writes them, "(5,)"). */
int mg_st_load_weights(mg_st_file *f, mg_st_want *w, int n, size_t extra, int mapped, const mg_st_format *fmt,
                       mg_st_convert_fn convert, void *ctx, mg_st_weights *out, char *err, size_t errlen);

/* The bytes of a file for a loader: fn(ctx, buf, len, mapped, err, errlen) returns MG_OK or MG_ERR
 * with a message.  mg_st_with_file memory-maps a regular file read-only (mapped = 1: the loader
 * may give converted pages back with mg_st_release_mapped) and reads any other file (a pipe) into
 * memory; the bytes are valid only during the call.  Errors (the file's and fn's) are prefixed
 * with the path. */
typedef int (*mg_st_bytes_fn)(void *ctx, const uint8_t *buf, size_t len, int mapped, char *err, size_t errlen);
int mg_st_with_file(const char *path, mg_st_bytes_fn fn, void *ctx, char *err, size_t errlen);

/* Give the pages of a converted tensor of a read-only private file mapping back (they leave the
 * process's resident set; touched again they would be read again from the file, so this is only
 * a hint).  Never to be called on a heap buffer, whose pages it would zero. */
void mg_st_release_mapped(const uint8_t *data, size_t n);

/* IEEE half and bfloat16 bit patterns to float. */
float mg_half_to_float(uint16_t h);
float mg_bf16_to_float(uint16_t b);

#ifdef __cplusplus
}
#endif
#endif
