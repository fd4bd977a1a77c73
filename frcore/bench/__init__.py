"""LifecycleBench: suite format v1, judge-free scoring by the paper's rules, every system as a
configuration of the FR-Bank pipeline, the built-in generator and the LoCoMo evaluation."""

from ._cluster import (
    Rebuild as Rebuild,
    add_scheduler_argument as add_scheduler_argument,
    connect as connect,
    disconnect as disconnect,
    map_tasks as map_tasks,
    portable as portable,
    resolve as resolve,
    shipped_bytes as shipped_bytes,
)
from ._generator import generate_suite as generate_suite, generate_suites as generate_suites
from ._inputs import (
    add_suite_arguments as add_suite_arguments,
    load_suites_arg as load_suites_arg,
    make_embedder as make_embedder,
    personas_arg as personas_arg,
    select_personas as select_personas,
)
from ._metrics import (
    aggregate as aggregate,
    markdown_table as markdown_table,
    mcnemar as mcnemar,
    paired_bootstrap as paired_bootstrap,
    question_outcome as question_outcome,
)
from ._runner import bank_records as bank_records, git_revision as git_revision, run_benchmark as run_benchmark
from ._suite import (
    corpus as corpus,
    load_suite as load_suite,
    load_suites as load_suites,
    parse_suite as parse_suite,
    raw_turn_corpus as raw_turn_corpus,
    raw_turn_questions as raw_turn_questions,
    suite_to_dict as suite_to_dict,
)
from ._systems import (
    BASELINES as BASELINES,
    DEFAULT_SYSTEMS as DEFAULT_SYSTEMS,
    SYSTEMS as SYSTEMS,
    System as System,
    cognitive_partition as cognitive_partition,
    collapse_params as collapse_params,
    resolve_systems as resolve_systems,
)

__all__ = [
    # suites: format v1, the generator, and reading them as every command does
    "add_suite_arguments",
    "corpus",
    "generate_suite",
    "generate_suites",
    "load_suite",
    "load_suites",
    "load_suites_arg",
    "parse_suite",
    "personas_arg",
    "raw_turn_corpus",
    "raw_turn_questions",
    "select_personas",
    "suite_to_dict",
    # systems
    "BASELINES",
    "DEFAULT_SYSTEMS",
    "SYSTEMS",
    "System",
    "cognitive_partition",
    "collapse_params",
    "resolve_systems",
    # running and scoring
    "bank_records",
    "git_revision",
    "make_embedder",
    "run_benchmark",
    "aggregate",
    "markdown_table",
    "mcnemar",
    "paired_bootstrap",
    "question_outcome",
    # maps over tasks, in-process or on a Dask cluster (--scheduler)
    "Rebuild",
    "add_scheduler_argument",
    "connect",
    "disconnect",
    "map_tasks",
    "portable",
    "resolve",
    "shipped_bytes",
]
