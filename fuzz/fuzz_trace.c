/*
 * fuzz_trace.c - libFuzzer target: the internal-search trace parser (mg_trace_parse) on
 * arbitrary bytes.
 *
 * Input: first byte selects the game, whether the start position is given as the true root
 * (0x40), whether a minimax choice is given (0x20) and the child form (0x80: full, else short); the rest is the text, copied to an
 * exact-size heap buffer.  Checks: no crash, no out-of-bounds access, the result's tree
 * and counters stay in range, and every kept issue was written (the list is cleared before each
 * parse: an entry the count covers but nothing wrote has an empty message).  The seed corpus (fuzz/corpus/trace) holds valid traces of every
 * game (random annotations, breadth 1-3, depth 1-2), in both child forms.
 */
#include "fuzz_common.h"

#include "../csrc/format/mav_search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mg_trace_result *R; /* one result block for all inputs */
    if (size < 1 || size > 65536)
        return 0;
    if (!R && !(R = malloc(sizeof *R)))
        abort();
    int sel = data[0];
    _Alignas(16) unsigned char ref[MG_MAX_STATE];
    const void *refp;
    const mg_game *g = fuzz_game_and_root(sel, 0x1f, sel & 0x40, ref, &refp);
    if (!g)
        return 0;
    size_t n;
    char *text = fuzz_text(data, size, 0, &n);
    mg_trace_choice choice = {0, 2, {0, 1}};
    memset(R->issues, 0, sizeof R->issues);
    mg_trace_parse(g, NULL, (sel & 0x80) ? MG_TRACE_FORM_FULL : MG_TRACE_FORM_SHORT, text, n, refp, (sel & 0x20) ? &choice : NULL, R);
    if (R->n_nodes < 0 || R->n_nodes > MG_TRACE_MAX_NODES || R->n_entries < 0 ||
        R->n_entries > MG_TRACE_MAX_ENTRIES || R->n_issues < 0 || (R->ok && R->n_issues))
        abort();
    for (int i = 0; i < R->n_issues && i < MG_TRACE_MAX_ISSUES; i++)
        if (!R->issues[i].msg[0])
            abort();
    for (int i = 0; i < R->n_nodes; i++) {
        const mg_trace_node *nd = &R->nodes[i];
        if (nd->n_children < 0 || nd->n_children > MG_TRACE_MAX_BREADTH || nd->top_off < 0 ||
            nd->top_off + nd->n_top > R->n_entries || nd->depth > MG_TRACE_MAX_DEPTH ||
            (i > 0 && (nd->parent < 0 || nd->parent >= i)) || nd->value < -1 || nd->value > 63 ||
            nd->prev_agrees < -1 || nd->prev_agrees > 1 || (nd->prev_agrees >= 0) != (i > 0 && R->form == 1))
            abort();
        for (int k = 0; k < nd->n_children; k++)
            if (nd->child[k] <= i || nd->child[k] >= R->n_nodes)
                abort();
    }
    if (R->final_minimax > 0 && !R->final_legal)
        abort();
    free(text);
    return 0;
}
