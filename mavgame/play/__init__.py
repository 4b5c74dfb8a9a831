"""Playing games between agents (:mod:`mavgame.agents`): the league (game loop, adjudication, executors,
scheduling), its records, result store, PGN, openings, Elo fits and distributed execution."""
