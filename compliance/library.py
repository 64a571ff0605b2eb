"""What the engine knows about the libraries agents call: which calls train a model, which predict, which
work across rows, which arguments are only shapes, which methods change their receiver.

These tables are part of both rules' definitions: changing one changes verdicts, so bump the version of
every rule whose sinks or operations it touches (see docs/compliance.md).

Names of library functions are matched on the dotted name the import resolved to (`numpy.mean`, whatever
`np` was called). Methods are matched on the method name alone, because the engine does not infer types:
`.mean()` is a cross-row operation only when its receiver carries batch data, so `train.mean()` stays clean.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- training -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Roles:
    """Which arguments of a call play a role (training data, model input): positions and keyword names."""

    positions: tuple[int, ...] = ()
    keywords: frozenset[str] = frozenset()
    #: every positional argument plays the role
    all_positional: bool = False


#: methods that fit an estimator on their arguments (the receiver is the estimator)
TRAIN_METHODS = frozenset({"fit", "fit_transform", "partial_fit", "fit_predict", "fit_resample"})
#: which arguments of those methods are training data. `eval_set`, `eval_sample_weight` and the like are
#: deliberately absent: the early-stopping set is allowed.
TRAIN_METHOD_ROLES = Roles(
    positions=(0, 1, 2),
    keywords=frozenset({"X", "y", "sample_weight", "xgb_model", "init_model", "base_margin", "init_score"}),
)
#: parts of estimator class names that learn from labels even when fit() is given a single argument
#: (a CatBoost Pool or an xgboost DMatrix carries its labels inside)
SUPERVISED_ESTIMATORS = ("Classifier", "Regressor", "CatBoost", "LGBM", "XGB", "Booster", "Ranker")
#: library functions that train, with their training-data arguments (`evals=` / `valid_sets=` allowed)
TRAIN_FUNCTIONS: dict[str, Roles] = {
    "xgboost.train": Roles((1,), frozenset({"dtrain", "xgb_model"})),
    "xgboost.training.train": Roles((1,), frozenset({"dtrain", "xgb_model"})),
    "xgboost.cv": Roles((1,), frozenset({"dtrain"})),
    "lightgbm.train": Roles((1,), frozenset({"train_set", "init_model"})),
    "lightgbm.cv": Roles((1,), frozenset({"train_set"})),
    "sklearn.model_selection.cross_val_score": Roles((1, 2), frozenset({"X", "y"})),
    "sklearn.model_selection.cross_validate": Roles((1, 2), frozenset({"X", "y"})),
    "sklearn.model_selection.cross_val_predict": Roles((1, 2), frozenset({"X", "y"})),
    "sklearn.model_selection.learning_curve": Roles((1, 2), frozenset({"X", "y"})),
    "sklearn.model_selection.validation_curve": Roles((1, 2), frozenset({"X", "y"})),
    "numpy.polyfit": Roles((0, 1), frozenset({"x", "y", "w"})),
}

# --- prediction ---------------------------------------------------------------------------------------

#: methods whose arguments are a model's input features
PREDICT_METHODS = frozenset(
    {"predict", "predict_proba", "predict_log_proba", "inplace_predict", "decision_function", "score_samples"}
)
PREDICT_ROLES = Roles(positions=(0,), keywords=frozenset({"X", "data", "dmatrix"}))

# --- cross-row operations -----------------------------------------------------------------------------

#: methods that combine values across rows when called on batch data
CROSS_ROW_METHODS = frozenset(
    {
        # aggregations
        "mean", "median", "std", "var", "sem", "min", "max", "sum", "prod", "product", "count", "nunique",
        "quantile", "mode", "skew", "kurt", "kurtosis", "idxmin", "idxmax", "describe", "value_counts",
        "unique", "nlargest", "nsmallest", "cov", "corr", "corrwith", "autocorr", "argmax", "argmin",
        "all", "any", "ptp",
        # order and neighbours
        "rank", "shift", "diff", "pct_change", "cumsum", "cumprod", "cummax", "cummin", "cumcount",
        "rolling", "expanding", "ewm", "ffill", "bfill", "pad", "backfill", "interpolate", "argsort",
        # duplicates and groups
        "duplicated", "drop_duplicates", "groupby", "transform", "agg", "aggregate", "resample",
        "factorize", "pivot_table", "ngroup",
    }
)  # fmt: skip
#: aggregations whose `axis=1` (or `axis="columns"`) form works within each row instead
AXIS_AWARE = frozenset(
    {"mean", "median", "std", "var", "sem", "min", "max", "sum", "prod", "product", "count", "nunique",
     "quantile", "mode", "skew", "kurt", "kurtosis", "idxmin", "idxmax", "all", "any", "rank", "shift",
     "diff", "pct_change", "cumsum", "cumprod", "cummax", "cummin", "ffill", "bfill", "interpolate",
     "argmax", "argmin", "argsort", "ptp", "apply"}
)  # fmt: skip
#: library functions that combine values across rows of their data arguments
CROSS_ROW_FUNCTIONS = frozenset(
    {
        "numpy.mean", "numpy.median", "numpy.std", "numpy.var", "numpy.min", "numpy.max", "numpy.amin",
        "numpy.amax", "numpy.sum", "numpy.prod", "numpy.nanmean", "numpy.nanmedian", "numpy.nanstd",
        "numpy.nanvar", "numpy.nanmin", "numpy.nanmax", "numpy.nansum", "numpy.percentile",
        "numpy.quantile", "numpy.nanpercentile", "numpy.nanquantile", "numpy.unique", "numpy.bincount",
        "numpy.histogram", "numpy.histogram_bin_edges", "numpy.cumsum", "numpy.cumprod", "numpy.diff",
        "numpy.argsort", "numpy.sort", "numpy.ptp", "numpy.average", "numpy.corrcoef", "numpy.cov",
        "numpy.argmax", "numpy.argmin", "numpy.partition", "numpy.roll",
        "pandas.qcut", "pandas.factorize", "pandas.crosstab", "pandas.pivot_table", "pandas.unique",
        "pandas.value_counts",
        "scipy.stats.zscore", "scipy.stats.rankdata", "scipy.stats.percentileofscore", "scipy.stats.boxcox",
        "scipy.stats.yeojohnson", "scipy.stats.mode", "scipy.stats.iqr", "scipy.stats.skew",
        "sklearn.preprocessing.scale", "sklearn.preprocessing.minmax_scale",
        "sklearn.preprocessing.robust_scale", "sklearn.preprocessing.maxabs_scale",
        "sklearn.preprocessing.quantile_transform", "sklearn.preprocessing.power_transform",
        "statistics.mean", "statistics.median", "statistics.stdev", "statistics.pstdev",
        "statistics.variance", "statistics.mode", "statistics.quantiles",
        "collections.Counter", "builtins.sorted",
    }
)  # fmt: skip
#: builtins that aggregate when given one iterable (`max(a, b)` compares two values: row-wise)
ITERABLE_AGGREGATES = frozenset(
    {"builtins.sum", "builtins.min", "builtins.max", "builtins.any", "builtins.all"}
)

#: `fillna(method=...)` values that copy neighbouring rows
FILL_FROM_NEIGHBOURS = frozenset({"ffill", "bfill", "pad", "backfill"})

#: categorical methods that replace the levels with the ones given (from training data, say)
FIX_LEVELS_METHODS = frozenset({"set_categories", "reorder_categories"})
#: attributes that number a categorical's levels
CODE_ATTRIBUTES = frozenset({"codes"})

# --- shapes: arguments that say how many, not what ----------------------------------------------------

ALL = -1
#: arguments (positions, keywords) of library functions that only give a size or count; the batch size
#: passing through them (`np.zeros(len(df))`, `range(0, len(df), 1000)`) is not a feature
SHAPE_ARGS: dict[str, Roles] = {
    "builtins.range": Roles(all_positional=True),
    "numpy.zeros": Roles((0,), frozenset({"shape"})),
    "numpy.ones": Roles((0,), frozenset({"shape"})),
    "numpy.empty": Roles((0,), frozenset({"shape"})),
    "numpy.full": Roles((0,), frozenset({"shape"})),
    "numpy.zeros_like": Roles(all_positional=True),
    "numpy.ones_like": Roles(all_positional=True),
    "numpy.empty_like": Roles(all_positional=True),
    "numpy.full_like": Roles((0,)),
    "numpy.repeat": Roles((1,), frozenset({"repeats"})),
    "numpy.tile": Roles((1,), frozenset({"reps"})),
    "numpy.array_split": Roles((1,), frozenset({"indices_or_sections"})),
    "numpy.split": Roles((1,), frozenset({"indices_or_sections"})),
    "numpy.reshape": Roles((1,), frozenset({"newshape", "shape"})),
}
#: functions that cut their first argument into chunks of rows
SPLITTING_FUNCTIONS = frozenset({"numpy.array_split", "numpy.split"})
SHAPE_METHOD_ARGS: dict[str, Roles] = {
    "reshape": Roles(all_positional=True),
    "head": Roles(all_positional=True, keywords=frozenset({"n"})),
    "tail": Roles(all_positional=True, keywords=frozenset({"n"})),
    "sample": Roles(all_positional=True, keywords=frozenset({"n", "frac"})),
    "repeat": Roles(all_positional=True),
}
#: keyword arguments that label rows rather than carry values, wherever they appear
SHAPE_KEYWORDS = frozenset({"index", "columns", "shape", "size", "n", "chunksize", "batch_size"})

# --- attributes ---------------------------------------------------------------------------------------

#: attributes that describe a frame's layout, the same for every batch and every file
SCHEMA_ATTRIBUTES = frozenset({"columns", "dtypes", "dtype", "ndim", "feature_names_in_", "n_features_in_"})
#: attributes that are the number of rows (`shape` is rows and columns; rows is what varies)
SIZE_ATTRIBUTES = frozenset({"shape", "size"})
#: views of a frame: a store through them changes the frame
ROW_ACCESSORS = frozenset({"loc", "iloc", "at", "iat"})
#: accessors whose methods work on each element (`df.Origin.str.count("A")` is not a count over rows)
ELEMENT_ACCESSORS = frozenset({"str", "dt", "cat", "sparse"})

# --- methods that change their receiver ---------------------------------------------------------------

MUTATING_METHODS = frozenset(
    {
        "append", "extend", "insert", "update", "add", "setdefault", "sort", "reverse", "set_label",
        "set_info", "set_float_info", "set_uint_info", "set_base_margin", "set_weight", "set_group",
        "set_params", "__setitem__", "appendleft", "put", "write",
    }
)  # fmt: skip

#: methods of a frame that return the frame (or a copy of it) with its columns intact
FRAME_PRESERVING = frozenset(
    {
        "copy",
        "reset_index",
        "sort_values",
        "sort_index",
        "set_index",
        "rename",
        "astype",
        "fillna",
        "dropna",
        "sample",
        "head",
        "tail",
        "infer_objects",
    }
)

# --- files --------------------------------------------------------------------------------------------

#: calls that list a directory or expand a pattern; with a known argument they are folded into paths
GLOB_FUNCTIONS = frozenset({"glob.glob", "glob.iglob"})
LISTDIR_FUNCTIONS = frozenset({"os.listdir", "os.scandir", "os.walk"})
PATH_GLOB_METHODS = frozenset({"glob", "rglob"})
PATH_LIST_METHODS = frozenset({"iterdir"})
