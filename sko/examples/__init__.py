"""Built-in example systems: rigid (:func:`example_systems`), flexible and geared
(:func:`flexible_examples`), random mixed trees (:func:`random_system`)."""

from sko.examples.bodies import flexible_examples, random_system, verify_models
from sko.examples.rigid import example_systems

__all__ = ["example_systems", "flexible_examples", "random_system", "verify_models"]
