/*
 * fuzz_model.c - libFuzzer target: the model-file reader (csrc/model: safetensors container,
 * JSON header, MAV configuration, weights) on arbitrary bytes.
 *
 * Input: the whole file, copied to an exact-size heap buffer.  Checks: no crash, no
 * out-of-bounds access, no leak; a file that loads has a consistent configuration, and when
 * it is small its forward pass runs on a short prompt with finite-or-not logits but no fault.
 * The seed corpus (fuzz/corpus/model) holds tiny models in float32, float16 and bfloat16.
 */
#include "fuzz_common.h"

#include "../csrc/model/engine.h"
#include "../csrc/model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = fuzz_bytes(data, size);
    mg_model m;
    char err[MG_ERRLEN];
    if (mg_model_load_buffer(&m, buf, size, err, sizeof err) == MG_OK) {
        const mg_model_config *c = &m.cfg;
        if (c->head_dim * c->n_heads != c->d_model || c->n_heads % c->n_kv_heads || !m.embed || !m.out || !m.norm)
            abort();
        if (c->max_seq_len <= 256) {
            mg_engine *e;
            if (mg_engine_create(&e, &m, 1, 1, 0, err, sizeof err) == MG_OK) {
                int32_t prompt[3] = {0, (int32_t)(c->vocab_size - 1), (int32_t)(c->vocab_size / 2)};
                int len = c->max_seq_len < 3 ? c->max_seq_len : 3;
                float *logits = malloc(sizeof(float) * (size_t)c->vocab_size);
                if (!logits || mg_engine_logits(e, prompt, len, logits, err, sizeof err) != MG_OK)
                    abort();
                free(logits);
                mg_engine_free(e);
            }
        }
        mg_model_free(&m);
    } else if (!err[0]) {
        abort(); /* every refusal says why */
    }
    free(buf);
    return 0;
}
