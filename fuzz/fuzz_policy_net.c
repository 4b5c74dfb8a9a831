/*
 * fuzz_policy_net.c - libFuzzer target: the native policy network's file reader
 * (csrc/model/policy_net.h: safetensors container, JSON header, configuration, tensor set and
 * shapes, weight conversion) on arbitrary bytes.
 *
 * Input: the whole file, copied to an exact-size heap buffer.  Checks: no crash, no
 * out-of-bounds access, no leak; a refusal always says why; a file that loads has a consistent
 * configuration, and its forward pass runs on two positions (planes taken from the input bytes)
 * and its masked softmax on the logits, without a fault.  The seed corpus (fuzz/corpus/policy_net)
 * holds the smallest networks (1 channel, pooling head) in float16 and bfloat16.
 */
#include "fuzz_common.h"

#include "../csrc/model/policy_net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = fuzz_bytes(data, size);
    mg_policy_net net;
    char err[MG_ERRLEN];
    err[0] = 0;
    if (mg_policy_net_load_buffer(&net, buf, size, (int)(size & 1), err, sizeof err) == MG_OK) {
        if (net.channels < 1 || net.channels > MG_PNET_MAX_CHANNELS || net.blocks < 0 ||
            net.fc_in != (net.head == MG_PNET_HEAD_POOL ? 16 * net.channels : 64 * MG_PNET_CONV_HEAD) ||
            !net.stem_w || !net.fc_w || !net.fc_b || (net.head == MG_PNET_HEAD_CONV && !net.head_w))
            abort();
        if (net.channels <= 64 && net.blocks <= 4) {
            enum { N = 2 };
            float *planes = calloc((size_t)N * MG_PNET_PLANES * 64, sizeof(float));
            float *logits = malloc(sizeof(float) * N * MG_PNET_MOVES);
            float *scratch = malloc(sizeof(float) * mg_policy_net_scratch_floats(&net, N));
            uint8_t *legal = malloc(MG_PNET_MOVES);
            if (!planes || !logits || !scratch || !legal)
                abort();
            for (size_t i = 0; i < (size_t)N * MG_PNET_PLANES * 64; i++)
                planes[i] = (float)(data[i % size] & 3) * 0.5f;
            for (int i = 0; i < MG_PNET_MOVES; i++)
                legal[i] = (uint8_t)(data[i % size] & 1);
            mg_policy_net_forward(&net, planes, N, logits, scratch);
            mg_policy_masked_softmax(logits, legal, logits);
            free(planes);
            free(logits);
            free(scratch);
            free(legal);
        }
        mg_policy_net_free(&net);
    } else if (!err[0]) {
        abort(); /* every refusal says why */
    }
    free(buf);
    return 0;
}
