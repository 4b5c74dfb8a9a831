/*
 * bindings.h - the list of per-module binding functions called at import.
 * To add one: declare it and add it to MG_BINDINGS (one line each).
 */
#ifndef MG_BINDINGS_H
#define MG_BINDINGS_H
#include "state.h"

typedef int (*mg_bind_fn)(PyObject *m);

int mg_bind_chess(PyObject *m);
int mg_bind_mcts(PyObject *m);
int mg_bind_mcts_eval(PyObject *m);
int mg_bind_mcts_multi(PyObject *m);
int mg_bind_mav_write(PyObject *m);
int mg_bind_mav_parse(PyObject *m);
int mg_bind_mav_metrics(PyObject *m);
int mg_bind_values(PyObject *m);
int mg_bind_tokenizer(PyObject *m);
int mg_bind_examples(PyObject *m);
int mg_bind_mav_search(PyObject *m);
int mg_bind_connect_four(PyObject *m);
int mg_bind_hex(PyObject *m);
int mg_bind_playout(PyObject *m);
int mg_bind_model(PyObject *m);
int mg_bind_cuda(PyObject *m);
int mg_bind_rules(PyObject *m);
int mg_bind_gardner(PyObject *m);
int mg_bind_chess_policy(PyObject *m);
int mg_bind_alphabeta(PyObject *m);
int mg_bind_policy_net(PyObject *m);
int mg_bind_az(PyObject *m);

static const mg_bind_fn MG_BINDINGS[] = {
    mg_bind_chess,
    mg_bind_mcts,
    mg_bind_mcts_eval,
    mg_bind_mcts_multi,
    mg_bind_mav_write,
    mg_bind_mav_parse,
    mg_bind_mav_metrics,
    mg_bind_values,
    mg_bind_tokenizer,
    mg_bind_examples, /* after the tokenizer type it takes */
    mg_bind_mav_search,
    mg_bind_connect_four,
    mg_bind_hex,
    mg_bind_playout,
    mg_bind_model,
    mg_bind_cuda,
    mg_bind_rules,
    mg_bind_gardner,
    mg_bind_chess_policy,
    mg_bind_alphabeta,
    mg_bind_policy_net,
    mg_bind_az,
    NULL, /* keep last */
};

#endif
