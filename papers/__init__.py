"""Runnable reproductions of the papers' results (each run by a test)."""
