"""Bounds of the composer's settings, importable without the composer (the CLI's option types use them)."""

#: Longest walk accepted. A candidate's cost grows faster than its walk (measured on 2 busy cores:
#: 1,000 visits ~4 s a candidate, 10,000 > 100 s; 1,000,000 ran past 300 s) while walks past a few
#: dozen visits are rejected by the gates anyway, so a longer one only burns the budget.
MAX_WALK_LENGTH = 100
