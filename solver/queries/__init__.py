"""What a user asks of a game: puzzles, move listings, the rulebooks' worked examples and
the ambiguities between readings.  Answers are data; drawing them is render's job."""
