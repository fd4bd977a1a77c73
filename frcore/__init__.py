"""frcore: Fortunate Recall's lifecycle layer — ontology, score kernels, FR-Bank and benchmark.

The core is stateless JAX functions over arrays (``score`` for one candidate, vmapped and
jit-compiled as ``score_candidates`` / ``score_queries`` / ``score_sweep``); parameters are an
immutable pytree (:class:`LifecycleParams`); inputs are validated at the boundary by
:func:`make_candidates` and :func:`make_query`.
"""

from ._ontology import (
    ANTICIPATION as ANTICIPATION,
    CATEGORY_NAMES as CATEGORY_NAMES,
    COGNITIVE_RATES_PER_HOUR as COGNITIVE_RATES_PER_HOUR,
    HOURS_PER_MESSAGE as HOURS_PER_MESSAGE,
    N_CATEGORIES as N_CATEGORIES,
    ONTOLOGY as ONTOLOGY,
    SUPERSESSION_CONFIDENCE_THRESHOLD as SUPERSESSION_CONFIDENCE_THRESHOLD,
    Category as Category,
    CategoryRow as CategoryRow,
    CognitiveType as CognitiveType,
    as_arrays as as_arrays,
    category_index as category_index,
)
from ._packed import (
    PARAM_SIZES as PACKED_PARAM_SIZES,
    ROW_START as PACKED_ROW_START,
    pack_candidates as pack_candidates,
    pack_params as pack_params,
    pack_query as pack_query,
    score_packed as score_packed,
    score_top_k_packed as score_top_k_packed,
    score_top_k_rows as score_top_k_rows,
)
from ._params import (
    MIN_BLEND as MIN_BLEND,
    MIN_SUPERSESSION_WEIGHT as MIN_SUPERSESSION_WEIGHT,
    LifecycleParams as LifecycleParams,
    default_params as default_params,
    params_to_numpy as params_to_numpy,
    replace as replace_params,
    scale_rates as scale_rates,
    stack_params as stack_params,
    validate_params as validate_params,
)
from ._params_io import (
    PARAMS_FORMAT as PARAMS_FORMAT,
    ParamsError as ParamsError,
    ParamsFile as ParamsFile,
    add_params_arguments as add_params_arguments,
    apply_param_overrides as apply_param_overrides,
    load_params as load_params,
    override_value as override_value,
    param_changes as param_changes,
    params_from_args as params_from_args,
    params_from_dict as params_from_dict,
    params_record as params_record,
    params_to_dict as params_to_dict,
    parse_param_grid as parse_param_grid,
    parse_param_override as parse_param_override,
    read_params_file as read_params_file,
    resolve_params as resolve_params,
    save_params as save_params,
)
from ._partitions import (
    optimal_by_k as optimal_by_k,
    optimal_table_partitions as optimal_table_partitions,
    partition_blocks as partition_blocks,
    partition_variances as partition_variances,
    restricted_growth_strings as restricted_growth_strings,
    table_policies as table_policies,
)
from ._runtime import (
    ASYNC_ENV as ASYNC_ENV,
    cpu_dispatch_mode as cpu_dispatch_mode,
    enable_compilation_cache as enable_compilation_cache,
    prefer_sync_cpu_dispatch as prefer_sync_cpu_dispatch,
)
from ._scoring import (
    Candidates as Candidates,
    Query as Query,
    ScoreTerms as ScoreTerms,
    activation as activation,
    anticipatory_activation as anticipatory_activation,
    blend as blend,
    compatibility_mask as compatibility_mask,
    effective_age as effective_age,
    effective_rate as effective_rate,
    exemption_term as exemption_term,
    primary_category as primary_category,
    routing_term as routing_term,
    score as score,
    score_candidates as score_candidates,
    score_queries as score_queries,
    score_sweep as score_sweep,
    supersession_term as supersession_term,
    top_k as top_k,
)
from ._time import (
    TimeParseError as TimeParseError,
    hours_since_epoch as hours_since_epoch,
    parse_time as parse_time,
    time_from_hours as time_from_hours,
)
from ._types import (
    ABLATIONS as ABLATIONS,
    COMPATIBLE as COMPATIBLE,
    INTENT_NAMES as INTENT_NAMES,
    STATE_NAMES as STATE_NAMES,
    Intent as Intent,
    ScoreConfig as ScoreConfig,
    State as State,
    intent_index as intent_index,
    state_index as state_index,
)
from ._validate import (
    bucket_size as bucket_size,
    category_weights_matrix as category_weights_matrix,
    make_candidates as make_candidates,
    make_query as make_query,
    stack_candidates as stack_candidates,
    stack_queries as stack_queries,
)

#: The public API, written out (a name imported above but missing here is not public; tested).
__all__ = [
    # ontology
    "ANTICIPATION",
    "CATEGORY_NAMES",
    "COGNITIVE_RATES_PER_HOUR",
    "HOURS_PER_MESSAGE",
    "N_CATEGORIES",
    "ONTOLOGY",
    "SUPERSESSION_CONFIDENCE_THRESHOLD",
    "Category",
    "CategoryRow",
    "CognitiveType",
    "as_arrays",
    "category_index",
    # parameters
    "MIN_BLEND",
    "MIN_SUPERSESSION_WEIGHT",
    "LifecycleParams",
    "default_params",
    "params_to_numpy",
    "replace_params",
    "scale_rates",
    "stack_params",
    "validate_params",
    # the parameter file (frcore-params-v1) and NAME=VALUE overrides
    "PARAMS_FORMAT",
    "ParamsError",
    "ParamsFile",
    "add_params_arguments",
    "apply_param_overrides",
    "load_params",
    "override_value",
    "param_changes",
    "params_from_args",
    "params_from_dict",
    "params_record",
    "params_to_dict",
    "parse_param_grid",
    "parse_param_override",
    "read_params_file",
    "resolve_params",
    "save_params",
    # kernels and their inputs
    "Candidates",
    "Query",
    "ScoreTerms",
    "activation",
    "anticipatory_activation",
    "blend",
    "compatibility_mask",
    "effective_age",
    "effective_rate",
    "exemption_term",
    "primary_category",
    "routing_term",
    "score",
    "score_candidates",
    "score_queries",
    "score_sweep",
    "supersession_term",
    "top_k",
    "KERNELS",
    # states, intents, ablation switches
    "ABLATIONS",
    "COMPATIBLE",
    "INTENT_NAMES",
    "STATE_NAMES",
    "Intent",
    "ScoreConfig",
    "State",
    "intent_index",
    "state_index",
    # packed fast path (the layout a peer implementation reads)
    "PACKED_PARAM_SIZES",
    "PACKED_ROW_START",
    "pack_candidates",
    "pack_params",
    "pack_query",
    "score_packed",
    "score_top_k_packed",
    "score_top_k_rows",
    # partitions of the categories (A.5; the fr-collapsed-K systems)
    "optimal_by_k",
    "optimal_table_partitions",
    "partition_blocks",
    "partition_variances",
    "restricted_growth_strings",
    "table_policies",
    # runtime
    "ASYNC_ENV",
    "cpu_dispatch_mode",
    "enable_compilation_cache",
    "prefer_sync_cpu_dispatch",
    # timestamps
    "TimeParseError",
    "hours_since_epoch",
    "parse_time",
    "time_from_hours",
    # input validation
    "bucket_size",
    "category_weights_matrix",
    "make_candidates",
    "make_query",
    "stack_candidates",
    "stack_queries",
]


#: The public kernels — every function of the kernel module :mod:`frcore._scoring` that is in
#: ``__all__``, in ``__all__`` order; each must have a twin in :mod:`frcore.reference` (tested).
def _kernel_names(namespace: dict) -> tuple[str, ...]:
    return tuple(
        n
        for n in __all__
        if n in namespace
        and callable(namespace[n])
        and not isinstance(namespace[n], type)
        and getattr(namespace[n], "__module__", None) == "frcore._scoring"
    )


KERNELS: tuple[str, ...] = _kernel_names(globals())
del _kernel_names
