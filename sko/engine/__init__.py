"""The compiled engine."""
