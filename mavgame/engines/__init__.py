"""External engines: the UCI client, Stockfish skill levels, and engine annotation of positions."""
