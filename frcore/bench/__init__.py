"""LifecycleBench: suite format v1, judge-free scoring by the paper's rules, every system as a
configuration of the FR-Bank pipeline, the built-in generator and the LoCoMo evaluation."""

from ._generator import generate_suite as generate_suite, generate_suites as generate_suites
from ._metrics import aggregate as aggregate, markdown_table as markdown_table, question_outcome as question_outcome
from ._runner import run_benchmark as run_benchmark
from ._suite import corpus as corpus, load_suite as load_suite, load_suites as load_suites, parse_suite as parse_suite
from ._systems import SYSTEMS as SYSTEMS, resolve_systems as resolve_systems

__all__ = ["SYSTEMS", "aggregate", "corpus", "generate_suite", "generate_suites", "load_suite", "load_suites", "markdown_table", "parse_suite", "question_outcome", "resolve_systems", "run_benchmark"]
