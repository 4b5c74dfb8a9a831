"""Python classes for the games of mavgame's C core (one module per game), and the game registry
(:mod:`mavgame.games.registry`: one descriptor per game, registered by the game's module)."""
