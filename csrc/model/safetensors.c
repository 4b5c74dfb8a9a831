/*
 * safetensors.c - the validating safetensors reader of safetensors.h.
 */
/* madvise(MADV_DONTNEED) (Linux, the BSDs, macOS) is not in POSIX: ask for the system's extensions */
#define _DEFAULT_SOURCE 1
#define _DARWIN_C_SOURCE 1
#include "safetensors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../game.h"
#include "json.h"

/* ---- half-precision conversions (the container's F16 and BF16 dtypes) ----------------------- */

float mg_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                e++;
                man <<= 1;
            } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3FF) << 13);
        }
    } else if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float mg_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}


static const char *const DT_NAMES[MG_ST_NDTYPES] = {"F64", "F32", "F16", "BF16", "I64", "I32", "I16",
                                                     "I8",  "U8",  "U16", "U32",  "U64", "BOOL"};
static const size_t DT_SIZES[MG_ST_NDTYPES] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 2, 4, 8, 1};

const char *mg_st_dtype_name(int dtype)
{
    return dtype >= 0 && dtype < MG_ST_NDTYPES ? DT_NAMES[dtype] : "?";
}

size_t mg_st_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < MG_ST_NDTYPES ? DT_SIZES[dtype] : 0;
}

void mg_st_free(mg_st_file *f)
{
    for (int i = 0; i < f->n_tensors; i++)
        free(f->tensors[i].name);
    free(f->tensors);
    for (int i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->meta_keys);
    free(f->meta_values);
    memset(f, 0, sizeof *f);
}

/* A malloc'ed unescaped copy of string token t, or NULL. */
static char *str_dup(const char *s, const mg_json_tok *t)
{
    size_t cap = t->end - t->start + 1; /* unescaping never grows a string */
    char *out = malloc(cap);
    if (out && mg_json_str_copy(s, t, out, cap) < 0) {
        free(out);
        return NULL;
    }
    return out;
}

typedef struct span {
    uint64_t b, e;
    int idx;
} span;

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    return x->e < y->e ? -1 : x->e > y->e;
}

#define FAIL(...)                                   \
    do {                                            \
        snprintf(err, errlen, __VA_ARGS__);         \
        goto fail;                                  \
    } while (0)

int mg_st_parse(const uint8_t *buf, size_t len, mg_st_file *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    mg_json_tok *toks = NULL;
    span *spans = NULL;
    char jerr[MG_ERRLEN];
    if (len < 8)
        FAIL("not a safetensors file (only %zu bytes)", len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | buf[i];
    if (hlen > MG_ST_MAX_HEADER || hlen > len - 8)
        FAIL("invalid safetensors header length %llu for a file of %zu bytes", (unsigned long long)hlen, len);
    const char *h = (const char *)buf + 8;
    const uint8_t *data = buf + 8 + hlen;
    size_t dlen = len - 8 - (size_t)hlen;
    int nt = mg_json_parse(h, (size_t)hlen, NULL, 0, jerr, sizeof jerr);
    if (nt < 0)
        FAIL("invalid safetensors header: %s", jerr);
    toks = malloc((size_t)nt * sizeof *toks);
    if (!toks)
        FAIL("out of memory for %d header tokens", nt);
    mg_json_parse(h, (size_t)hlen, toks, nt, jerr, sizeof jerr);
    if (toks[0].type != MG_JSON_OBJECT)
        FAIL("safetensors header is not a JSON object");
    int nkeys = toks[0].size;
    f->tensors = calloc((size_t)nkeys + 1, sizeof *f->tensors);
    spans = calloc((size_t)nkeys + 1, sizeof *spans);
    if (!f->tensors || !spans)
        FAIL("out of memory for %d header entries", nkeys);
    int k = 1;
    for (int e = 0; e < nkeys; e++) {
        const mg_json_tok *key = &toks[k], *val = &toks[k + 1];
        int next = val->next;
        char *name = str_dup(h, key);
        if (!name)
            FAIL("header entry %d: key is not a valid name (empty, NUL or out of memory)", e);
        if (!name[0]) {
            free(name);
            FAIL("header entry %d: empty tensor name", e);
        }
        if (strcmp(name, "__metadata__") == 0) {
            free(name);
            if (val->type == MG_JSON_NULL) {
                k = next;
                continue;
            }
            if (val->type != MG_JSON_OBJECT || f->n_meta)
                FAIL("safetensors __metadata__ must be one object mapping strings to strings");
            int mk = k + 2;
            for (int j = 0; j < val->size; j++) {
                const mg_json_tok *mkey = &toks[mk], *mval = &toks[mk + 1];
                if (mval->type != MG_JSON_STRING)
                    FAIL("safetensors __metadata__ must map strings to strings (entry %d is not a string)", j);
                char *ks = str_dup(h, mkey), *vs = str_dup(h, mval);
                if (!ks || !vs) {
                    free(ks);
                    free(vs);
                    FAIL("__metadata__ entry %d: string with a NUL character", j);
                }
                /* repeated keys: the last one wins, as in Python's json */
                int dup = -1;
                for (int q = 0; q < f->n_meta; q++)
                    if (strcmp(f->meta_keys[q], ks) == 0)
                        dup = q;
                if (dup >= 0) {
                    free(f->meta_values[dup]);
                    f->meta_values[dup] = vs;
                    free(ks);
                } else {
                    char **nk = realloc(f->meta_keys, ((size_t)f->n_meta + 1) * sizeof(char *));
                    if (nk)
                        f->meta_keys = nk;
                    char **nv = realloc(f->meta_values, ((size_t)f->n_meta + 1) * sizeof(char *));
                    if (nv)
                        f->meta_values = nv;
                    if (!nk || !nv) {
                        free(ks);
                        free(vs);
                        FAIL("out of memory for metadata");
                    }
                    f->meta_keys[f->n_meta] = ks;
                    f->meta_values[f->n_meta] = vs;
                    f->n_meta++;
                }
                mk = toks[mk + 1].next;
            }
            k = next;
            continue;
        }
        for (int q = 0; q < f->n_tensors; q++)
            if (strcmp(f->tensors[q].name, name) == 0) {
                snprintf(err, errlen, "tensor '%.100s' appears twice in the header", name);
                free(name);
                goto fail;
            }
        mg_st_tensor *t = &f->tensors[f->n_tensors++];
        t->name = name;
        if (val->type != MG_JSON_OBJECT)
            FAIL("tensor '%.100s': header entry is not an object", name);
        int dt = mg_json_find(h, toks, k + 1, "dtype");
        int sh = mg_json_find(h, toks, k + 1, "shape");
        int of = mg_json_find(h, toks, k + 1, "data_offsets");
        t->dtype = -1;
        for (int q = 0; dt >= 0 && q < MG_ST_NDTYPES; q++)
            if (mg_json_str_eq(h, &toks[dt], DT_NAMES[q]))
                t->dtype = q;
        if (t->dtype < 0)
            FAIL("tensor '%.100s': unsupported or missing dtype", name);
        if (sh < 0 || toks[sh].type != MG_JSON_ARRAY || toks[sh].size > MG_ST_MAX_DIMS)
            FAIL("tensor '%.100s': invalid shape (a list of at most %d ints expected)", name, MG_ST_MAX_DIMS);
        t->ndim = toks[sh].size;
        int64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            int64_t v;
            if (mg_json_int(h, &toks[sh + 1 + d], &v) < 0 || v < 0 || v > ((int64_t)1 << 40))
                FAIL("tensor '%.100s': invalid shape (dimension %d is not an int in [0, 2^40])", name, d);
            t->shape[d] = v;
            if (v && numel > ((int64_t)1 << 40) / v)
                FAIL("tensor '%.100s': shape has too many elements", name);
            numel *= v;
        }
        t->numel = numel;
        int64_t b, e2;
        if (of < 0 || toks[of].type != MG_JSON_ARRAY || toks[of].size != 2 ||
            mg_json_int(h, &toks[of + 1], &b) < 0 || mg_json_int(h, &toks[of + 2], &e2) < 0)
            FAIL("tensor '%.100s': data_offsets must be a list of two ints", name);
        if (b < 0 || e2 < b || (uint64_t)e2 > dlen)
            FAIL("tensor '%.100s': data offsets [%lld, %lld] outside the %zu-byte buffer", name, (long long)b,
                 (long long)e2, dlen);
        uint64_t need = (uint64_t)numel * DT_SIZES[t->dtype];
        if (need != (uint64_t)(e2 - b))
            FAIL("tensor '%.100s': shape of %s needs %llu bytes, data offsets give %lld", name, DT_NAMES[t->dtype],
                 (unsigned long long)need, (long long)(e2 - b));
        t->data = data + b;
        t->nbytes = (size_t)(e2 - b);
        spans[f->n_tensors - 1] = (span){(uint64_t)b, (uint64_t)e2, f->n_tensors - 1};
        k = next;
    }
    qsort(spans, (size_t)f->n_tensors, sizeof *spans, span_cmp);
    for (int i = 0; i + 1 < f->n_tensors; i++)
        if (spans[i + 1].b < spans[i].e)
            FAIL("tensors '%.100s' and '%.100s' overlap in the data buffer", f->tensors[spans[i].idx].name,
                 f->tensors[spans[i + 1].idx].name);
    free(toks);
    free(spans);
    return MG_OK;
fail:
    free(toks);
    free(spans);
    mg_st_free(f);
    return MG_ERR;
}

const mg_st_tensor *mg_st_find(const mg_st_file *f, const char *name)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0)
            return &f->tensors[i];
    return NULL;
}

const mg_st_tensor *mg_st_take(mg_st_file *f, const char *name, const char *what, char *err, size_t errlen)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) {
            f->tensors[i].taken = 1;
            return &f->tensors[i];
        }
    snprintf(err, errlen, "%s do not match the config: '%s' is missing", what, name);
    return NULL;
}

int mg_st_all_taken(const mg_st_file *f, const char *what, char *err, size_t errlen)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (!f->tensors[i].taken) {
            snprintf(err, errlen, "%s do not match the config: unexpected tensor '%.100s'", what,
                     f->tensors[i].name);
            return MG_ERR;
        }
    return MG_OK;
}

/* The length of the singular of the caller's noun: "weights" -> "weight" (for "weight 'x' ..."). */
static int singular_len(const char *what)
{
    size_t n = strlen(what);
    return (int)(n > 0 && what[n - 1] == 's' ? n - 1 : n);
}

int mg_st_check_weight(const mg_st_tensor *t, const char *what, int *dtype, char *err, size_t errlen)
{
    if (t->dtype != MG_ST_F32 && t->dtype != MG_ST_F16 && t->dtype != MG_ST_BF16) {
        snprintf(err, errlen, "%.*s '%s' has dtype %s (F32, F16 or BF16 expected)", singular_len(what), what,
                 t->name, mg_st_dtype_name(t->dtype));
        return MG_ERR;
    }
    if (*dtype < 0 || t->dtype != MG_ST_F32)
        *dtype = t->dtype;
    return MG_OK;
}

int mg_st_check_finite(const mg_st_tensor *t, const char *what, char *err, size_t errlen)
{
    /* exponent all ones: inf (mantissa 0) or NaN */
    const uint8_t *p = t->data;
    size_t n = (size_t)t->numel, bad = n;
    int nan = 0, neg = 0;
    if (t->dtype == MG_ST_F32) {
        for (size_t i = 0; i < n; i++) {
            uint32_t b = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                         (uint32_t)p[4 * i + 3] << 24;
            if ((b & 0x7f800000u) == 0x7f800000u) {
                bad = i, nan = (b & 0x007fffffu) != 0, neg = (int)(b >> 31);
                break;
            }
        }
    } else {
        uint16_t e = t->dtype == MG_ST_F16 ? 0x7c00u : 0x7f80u; /* F16: 5 exponent bits, BF16: 8 */
        for (size_t i = 0; i < n; i++) {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            if ((h & e) == e) {
                bad = i, nan = (h & (uint16_t)(0x7fffu & ~e)) != 0, neg = h >> 15;
                break;
            }
        }
    }
    if (bad == n)
        return MG_OK;
    snprintf(err, errlen, "%.*s '%s' holds %s at element %zu: non-finite weights are refused (a diverged training "
             "run or a corrupt file)", singular_len(what), what, t->name, nan ? "nan" : neg ? "-inf" : "inf", bad);
    return MG_ERR;
}

const char *mg_st_meta(const mg_st_file *f, const char *key)
{
    for (int i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0)
            return f->meta_values[i];
    return NULL;
}

float mg_st_float(const mg_st_tensor *t, size_t i)
{
    const uint8_t *p = t->data + i * mg_st_dtype_size(t->dtype);
    if (t->dtype == MG_ST_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    uint16_t h = (uint16_t)(p[0] | (p[1] << 8));
    return t->dtype == MG_ST_F16 ? mg_half_to_float(h) : mg_bf16_to_float(h);
}

/* ---- a weight file ------------------------------------------------------------------------- */

int mg_st_open(const uint8_t *buf, size_t len, const mg_st_format *fmt, mg_st_file *f, char *err, size_t errlen)
{
    if (mg_st_parse(buf, len, f, err, errlen) != MG_OK)
        return MG_ERR;
    const char *got = mg_st_meta(f, "format"), *ver = mg_st_meta(f, "format_version");
    if (!got || strcmp(got, fmt->format) != 0) {
        snprintf(err, errlen, "not a mavgame %s (metadata format '%.60s', '%s' expected)", fmt->noun,
                 got ? got : "(none)", fmt->format);
        mg_st_free(f);
        return MG_ERR;
    }
    if (!ver || strcmp(ver, fmt->version) != 0) {
        snprintf(err, errlen, "unsupported %s format version '%.60s' (%s expected)", fmt->noun, ver ? ver : "(none)",
                 fmt->version);
        mg_st_free(f);
        return MG_ERR;
    }
    return MG_OK;
}

void mg_st_want_set(mg_st_want *w, const char *name, int kind, int ndim, const int64_t *shape, size_t floats,
                    const float **dst)
{
    memset(w, 0, sizeof *w);
    snprintf(w->name, sizeof w->name, "%s", name);
    w->kind = kind;
    w->ndim = ndim;
    size_t numel = 1;
    for (int k = 0; k < ndim && k < 4; k++) {
        w->shape[k] = shape[k];
        numel *= (size_t)shape[k];
    }
    w->floats = floats ? floats : numel;
    w->dst = dst;
}

/* A shape as Python writes a tuple: "4, 4, 3, 3", "5," (one dimension), "" (none). */
static void shape_text(const int64_t *shape, int ndim, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (int k = 0; k < ndim && at + 24 < cap; k++)
        at += (size_t)snprintf(out + at, cap - at, "%s%lld", k ? ", " : "", (long long)shape[k]);
    if (ndim == 1 && at + 2 < cap)
        snprintf(out + at, cap - at, ",");
}

int mg_st_load_weights(mg_st_file *f, mg_st_want *w, int n, size_t extra, int mapped, const mg_st_format *fmt,
                       mg_st_convert_fn convert, void *ctx, mg_st_weights *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *what = fmt->weights;
    size_t total = 0, floats = extra;
    int dtype = -1;
    for (int i = 0; i < n; i++) {   /* every check before the arena is allocated */
        const mg_st_tensor *t = mg_st_take(f, w[i].name, what, err, errlen);
        if (!t)
            return MG_ERR;
        int ok = t->ndim == w[i].ndim;
        for (int k = 0; ok && k < w[i].ndim; k++)
            ok = t->shape[k] == w[i].shape[k];
        if (!ok) {
            char got[96], exp[96];
            shape_text(t->shape, t->ndim, got, sizeof got);
            shape_text(w[i].shape, w[i].ndim, exp, sizeof exp);
            snprintf(err, errlen, "%.*s '%s' has shape (%s), config says (%s)", singular_len(what), what, w[i].name,
                     got, exp);
            return MG_ERR;
        }
        if (mg_st_check_weight(t, what, &dtype, err, errlen) != MG_OK)
            return MG_ERR;
        total += (size_t)t->numel;
        floats += w[i].floats;
    }
    if (mg_st_all_taken(f, what, err, errlen) != MG_OK)
        return MG_ERR;
    float *arena = calloc(floats ? floats : 1, sizeof(float)); /* zeros: the padding of the last panels */
    if (!arena) {
        snprintf(err, errlen, "out of memory for %zu weights", floats);
        return MG_ERR;
    }
    float *at = arena;
    for (int i = 0; i < n; i++) {
        const mg_st_tensor *t = mg_st_find(f, w[i].name);
        if (mg_st_check_finite(t, what, err, errlen) != MG_OK) {
            free(arena);
            return MG_ERR;
        }
        convert(ctx, &w[i], t, at);
        *w[i].dst = at;
        at += w[i].floats;
        if (mapped)
            mg_st_release_mapped(t->data, t->nbytes);
    }
    out->arena = arena;
    out->extra = at;
    out->n_params = total;
    out->dtype = dtype;
    return MG_OK;
}

void mg_st_release_mapped(const uint8_t *data, size_t n)
{
#ifdef MADV_DONTNEED
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096, lo = (uintptr_t)data & ~(page - 1), hi = ((uintptr_t)data + n) & ~(page - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
#else
    (void)data;
    (void)n;
#endif
}

/* Run fn over the bytes (a file mapping if `mapped`) and prefix any error with the path. */
static int with_bytes(const char *path, mg_st_bytes_fn fn, void *ctx, const uint8_t *buf, size_t len, int mapped,
                      char *err, size_t errlen)
{
    char inner[MG_ERRLEN];
    inner[0] = 0;
    int rc = fn(ctx, buf, len, mapped, inner, sizeof inner);
    if (rc != MG_OK)
        snprintf(err, errlen, "%s: %s", path, inner);
    return rc;
}

/* A file that cannot be mapped (a pipe, a character device): read it into memory. */
static int with_stream(const char *path, FILE *fp, mg_st_bytes_fn fn, void *ctx, char *err, size_t errlen)
{
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            size_t nc = cap ? cap * 2 : (size_t)1 << 20;
            uint8_t *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                snprintf(err, errlen, "%s: out of memory reading the file", path);
                return MG_ERR;
            }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + len, 1, cap - len, fp);
        len += r;
        if (r == 0)
            break;
    }
    if (ferror(fp)) {
        free(buf);
        snprintf(err, errlen, "%s: read error", path);
        return MG_ERR;
    }
    int rc = with_bytes(path, fn, ctx, buf, len, 0, err, errlen);
    free(buf);
    return rc;
}

int mg_st_with_file(const char *path, mg_st_bytes_fn fn, void *ctx, char *err, size_t errlen)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return MG_ERR;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        int rc = with_stream(path, fp, fn, ctx, err, errlen);
        fclose(fp);
        return rc;
    }
    if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX) {
        fclose(fp);
        snprintf(err, errlen, "%s: file of %lld bytes is too large", path, (long long)st.st_size);
        return MG_ERR;
    }
    size_t len = (size_t)st.st_size;
    if (len == 0) { /* mmap refuses a zero length: the reader's own error for an empty file */
        fclose(fp);
        return with_bytes(path, fn, ctx, (const uint8_t *)"", 0, 0, err, errlen);
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fileno(fp), 0);
    if (map == MAP_FAILED) {
        int rc = with_stream(path, fp, fn, ctx, err, errlen);
        fclose(fp);
        return rc;
    }
    fclose(fp); /* the mapping stays valid without the descriptor */
    posix_madvise(map, len, POSIX_MADV_SEQUENTIAL); /* a hint: its failure changes nothing */
    int rc = with_bytes(path, fn, ctx, map, len, 1, err, errlen);
    munmap(map, len);
    return rc;
}
