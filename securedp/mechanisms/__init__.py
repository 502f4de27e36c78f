"""Releases built on the exact samplers, each with its privacy map."""
