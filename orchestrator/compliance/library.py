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
#: the axes of what prediction methods return: one row per input row (and one column per class)
PREDICT_AXES: dict[str, tuple[str, ...]] = {
    "predict_proba": ("rows", "other"),
    "predict_log_proba": ("rows", "other"),
    "predict": ("rows",),
    "inplace_predict": ("rows",),
    "decision_function": ("rows",),
    "score_samples": ("rows",),
}

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
        "duplicated", "drop_duplicates", "transform", "agg", "aggregate", "resample",
        "factorize", "pivot_table", "ngroup",
    }
)  # fmt: skip
#: methods that call a function on each column, or on each row with axis=1
FUNCTION_METHODS = frozenset({"apply", "agg", "aggregate", "transform"})
#: the default axis of a method is the library's: 0 (down the rows) for pandas, every axis for numpy
LIBRARY_DEFAULT = "library default"
#: methods that reduce, rank or reorder along an axis: (position of the axis argument, its default). A
#: method runs across rows when that axis is the rows of the batch (`df.mean()`), within each row otherwise
#: (`df.mean(axis=1)`, `pd.DataFrame(member_predictions).mean()` whose axis 0 is the members)
METHOD_AXIS: dict[str, tuple[int, object]] = {
    **{m: (0, LIBRARY_DEFAULT) for m in (
        "mean", "median", "std", "var", "sem", "min", "max", "sum", "prod", "product", "count", "nunique",
        "mode", "skew", "kurt", "kurtosis", "idxmin", "idxmax", "all", "any", "ptp", "argmax", "argmin",
        "cumsum", "cumprod", "cummax", "cummin", "rank", "ffill", "bfill", "pad", "backfill",
    )},
    "quantile": (1, LIBRARY_DEFAULT),
    "diff": (1, 0),
    "pct_change": (10, 0),
    "shift": (2, 0),
    "interpolate": (10, 0),
    "argsort": (0, -1),
}  # fmt: skip
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
#: numpy and scipy functions that reduce, rank or reorder along an axis: (position of the axis argument, its
#: default; None = over every axis). Functions of CROSS_ROW_FUNCTIONS not listed here work over everything.
AXIS_FUNCTIONS: dict[str, tuple[int | None, int | None]] = {
    **{f"numpy.{f}": (1, None) for f in (
        "mean", "median", "std", "var", "min", "max", "amin", "amax", "sum", "prod", "nanmean", "nanmedian",
        "nanstd", "nanvar", "nanmin", "nanmax", "nansum", "ptp", "average", "argmax", "argmin", "cumsum",
        "cumprod", "nanargmax", "nanargmin", "all", "any",
    )},
    **{f"numpy.{f}": (2, None) for f in ("percentile", "quantile", "nanpercentile", "nanquantile", "roll")},
    "numpy.sort": (1, -1),
    "numpy.argsort": (1, -1),
    "numpy.diff": (2, -1),
    "numpy.partition": (2, -1),
    "numpy.unique": (None, None),
    "scipy.stats.zscore": (1, 0),
    "scipy.stats.rankdata": (None, None),
    "scipy.stats.mode": (1, 0),
    "scipy.stats.iqr": (1, None),
    "scipy.stats.skew": (1, 0),
    "scipy.stats.gmean": (1, 0),
    "scipy.stats.hmean": (1, 0),
    "scipy.special.softmax": (1, None),
    "sklearn.preprocessing.scale": (1, 0),
    "sklearn.preprocessing.robust_scale": (1, 0),
    "sklearn.preprocessing.maxabs_scale": (1, 0),
    "sklearn.preprocessing.minmax_scale": (2, 0),
    "sklearn.preprocessing.quantile_transform": (1, 0),
    "sklearn.preprocessing.normalize": (2, 1),
}  # fmt: skip
#: functions that build one array from a list of arrays (their axes: `compliance.dataflow.arrays.stacked`)
STACKING_FUNCTIONS = frozenset(
    {"numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray", "numpy.stack",
     "numpy.vstack", "numpy.row_stack", "numpy.column_stack", "numpy.hstack", "numpy.concatenate"}
)  # fmt: skip
#: numpy and scipy functions that work on each element: their result has their argument's axes
ELEMENTWISE_FUNCTIONS = frozenset(
    {f"numpy.{f}" for f in (
        "log", "log1p", "log2", "log10", "exp", "expm1", "sqrt", "square", "abs", "absolute", "fabs", "sign",
        "clip", "round", "around", "rint", "floor", "ceil", "trunc", "where", "maximum", "minimum", "fmax",
        "fmin", "power", "nan_to_num", "isnan", "isfinite", "isinf", "sin", "cos", "tan", "tanh", "arctan",
        "negative", "reciprocal", "add", "subtract", "multiply", "divide", "true_divide", "float32",
        "float64", "int32", "int64", "logical_and", "logical_or", "logical_not", "sigmoid",
    )}
    | {"scipy.special.expit", "scipy.special.logit", "builtins.float", "builtins.abs"}
)  # fmt: skip
#: methods that work on each element and keep their receiver's axes
ELEMENTWISE_METHODS = frozenset(
    {"astype", "clip", "round", "fillna", "copy", "to_numpy", "abs", "where", "mask", "replace", "map",
     "isna", "notna", "isnull", "notnull", "__array__", "tolist"}
)  # fmt: skip

#: library functions known to work row by row (each output row from the same input row) besides the
#: element-wise ones, and constructors: a call to a function in no table that receives the scored frame's
#: data is taken to work row by row too, and the audit says so (`Analysis.uncertain`)
ROW_WISE_FUNCTIONS = ELEMENTWISE_FUNCTIONS | frozenset(
    {"pandas.to_numeric", "pandas.to_datetime", "pandas.to_timedelta", "pandas.isna", "pandas.isnull",
     "pandas.notna", "pandas.notnull", "pandas.DataFrame", "pandas.Series", "pandas.Index",
     "pandas.Categorical", "pandas.get_dummies", "pandas.concat", "pandas.merge",
     "numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray", "numpy.stack",
     "numpy.vstack", "numpy.hstack", "numpy.column_stack", "numpy.row_stack", "numpy.concatenate",
     "numpy.digitize", "numpy.searchsorted", "numpy.interp", "numpy.select", "numpy.isin", "numpy.in1d",
     "numpy.full", "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full_like", "numpy.zeros_like",
     "numpy.ones_like", "numpy.empty_like", "numpy.arange", "numpy.ravel", "numpy.squeeze",
     "numpy.expand_dims", "numpy.atleast_1d", "numpy.atleast_2d", "numpy.reshape", "numpy.transpose",
     "numpy.mod", "numpy.floor_divide", "numpy.remainder", "numpy.arctan2", "numpy.hypot", "numpy.deg2rad",
     "numpy.radians", "numpy.degrees", "numpy.exp2", "numpy.cbrt", "numpy.char.add", "numpy.datetime64",
     "numpy.float16", "numpy.int8", "numpy.int16", "numpy.uint8", "numpy.bool_", "numpy.str_",
     "numpy.array_split", "numpy.split", "numpy.tile", "numpy.repeat", "numpy.nan_to_num",
     "scipy.special.expit", "scipy.special.logit", "scipy.special.erf",
     "xgboost.DMatrix", "lightgbm.Dataset", "catboost.Pool", "copy.copy", "copy.deepcopy",
     "functools.partial", "pandas.cut", "pandas.MultiIndex.from_arrays", "pandas.MultiIndex.from_tuples",
     "pandas.MultiIndex.from_frame", "pandas.Categorical.from_codes"}
)  # fmt: skip
#: methods known to work row by row (or to select, reshape or convert without combining rows)
ROW_WISE_METHODS = ELEMENTWISE_METHODS | frozenset(
    {"rename", "reset_index", "set_index", "reindex", "drop", "assign", "astype", "copy", "to_numpy",
     "to_frame", "to_list", "tolist", "to_dict", "values", "squeeze", "ravel", "flatten", "reshape",
     "item", "isin", "between", "add", "sub", "mul", "div", "truediv", "floordiv", "mod", "pow", "radd",
     "rsub", "rmul", "rdiv", "rtruediv", "eq", "ne", "lt", "le", "gt", "ge", "combine_first", "get",
     "get_indexer", "get_loc", "dropna", "sort_values", "sort_index", "head", "tail", "sample", "filter",
     "select_dtypes", "infer_objects", "convert_dtypes", "set_categories", "reorder_categories",
     "add_categories", "rename_categories", "remove_categories", "transform", "predict", "predict_proba",
     "decision_function", "inplace_predict", "join", "merge", "keys", "items", "iterrows", "itertuples",
     "update", "pop", "setdefault", "append", "extend", "insert", "view", "clip", "floor", "ceil",
     "explode", "melt", "stack", "unstack", "swaplevel", "droplevel", "add_prefix", "add_suffix", "format",
     "split", "strip", "lower", "upper", "replace", "startswith", "endswith", "encode", "decode",
     "fit", "fit_transform", "set_params", "get_params", "apply", "applymap", "pipe", "map", "agg",
     "aggregate", "mask", "where", "fillna", "notna", "isna"}
)  # fmt: skip

#: arguments that are a table or a set the other values are looked up in: built from the batch's own rows
#: (not from training data), a lookup in it makes a row's value depend on other rows
#: (`df.a.map(dict(zip(df.b, df.c)))`, `df.a.isin(df.b)`, `np.searchsorted(np.sort(df.a), x)`)
TABLE_METHOD_ARGS: dict[str, Roles] = {
    "map": Roles((0,), frozenset({"arg", "mapper"})),
    "replace": Roles((0,), frozenset({"to_replace"})),
    "isin": Roles((0,), frozenset({"values"})),
}
TABLE_FUNCTION_ARGS: dict[str, Roles] = {
    "numpy.isin": Roles((1,), frozenset({"test_elements"})),
    "numpy.in1d": Roles((1,), frozenset({"ar2"})),
    "numpy.searchsorted": Roles((0,), frozenset({"a"})),
    "numpy.interp": Roles((1, 2), frozenset({"xp", "fp"})),
    "numpy.digitize": Roles((1,), frozenset({"bins"})),
    "pandas.cut": Roles((1,), frozenset({"bins"})),
}

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

#: of those, the ones that keep the frame's column names as they were (rename, set_index and reset_index
#: change them)
COLUMN_PRESERVING = frozenset(
    {
        "copy",
        "sort_values",
        "sort_index",
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
