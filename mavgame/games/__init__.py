"""Python classes for the games of mavgame's C core (one module per game)."""
