"""Envs-FORGE: pass rates from rollouts, action-conditioned synthesis, gold-verified acceptance."""
