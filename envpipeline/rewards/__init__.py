"""Rubric rewards: pass vectors, CFRR, checklist credit and GRPO advantages."""
