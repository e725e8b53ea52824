"""Identity verification for SKO models, numeric and symbolic (SKO.md §2–§13).

>>> from sko.verify import run
>>> results = run(models=["chain"], checks=["spo_products", "newton_euler"])
>>> [(r.name, r.passed) for r in results]
[('spo_products', True), ('newton_euler', True)]
"""

from . import checks as _checks  # noqa: F401  (registers the built-in checks)
from . import physics as _physics  # noqa: F401  (registers the physics checks)
from . import derivatives as _derivatives  # noqa: F401  (registers the identities of the derivatives)
from . import consistency as _consistency  # noqa: F401  (registers kernel_consistency)
from . import constraints as _constraints  # noqa: F401  (registers the identities under constraints)
from . import identification as _identification  # noqa: F401  (registers the identities of the regressors)
from . import centroidal as _centroidal  # noqa: F401  (registers the identities of centroidal dynamics)
from .models import ModelSpec, get_model, make_case, model_names, random_sko_model, register_model
from .registry import REGISTRY, Case, Check, Comparison, Registry, Result, compare, exact_zero, register
from .runner import prove, resolve_cases, run, run_check, skipped_checks

__all__ = [
    "REGISTRY",
    "Case",
    "Check",
    "Comparison",
    "Registry",
    "Result",
    "ModelSpec",
    "compare",
    "exact_zero",
    "register",
    "register_model",
    "get_model",
    "make_case",
    "model_names",
    "random_sko_model",
    "resolve_cases",
    "run",
    "run_check",
    "prove",
    "skipped_checks",
]
