"""Facts about the torch API, the one copy every rule family and the semantic model read.

Names are qualified (``torch.no_grad``) or, for tensor methods, bare (``detach``). Each table says
what holds on current torch (2.x); where a legacy release differed the rule that cares says so.
Families that keep a narrower table of their own (a rule-specific choice, not a fact about torch)
build it from these.

Submodules: ``deprecations`` (renamed, removed and moved API: the TM4xx tables) and ``since`` (the torch
version in which each spelling a fix writes appeared, for ``--min-torch``).
"""
from __future__ import annotations

from typing import Dict

# -- tensor types and factories ---------------------------------------------------------------------
# Legacy tensor types and the dtype each makes (``torch.cuda.X`` as well, on the GPU).
TENSOR_TYPE_DTYPES: Dict[str, str] = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16",
    "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16", "CharTensor": "int8",
    "ByteTensor": "uint8", "BoolTensor": "bool",
}
TENSOR_TYPE_NAMES = frozenset({"Tensor", *TENSOR_TYPE_DTYPES})
TENSOR_TYPES = frozenset({f"torch.{t}" for t in TENSOR_TYPE_NAMES} | {f"torch.cuda.{t}" for t in TENSOR_TYPE_DTYPES})
# Factories that accept ``requires_grad=`` (checked on torch 2.x).
REQUIRES_GRAD_FACTORIES = frozenset(f"torch.{f}" for f in (
    "randn", "rand", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye", "tensor",
    "zeros_like", "ones_like", "rand_like", "randn_like", "empty_like", "full_like"))
# Calls that return a new tensor without autograd history, whatever their arguments.
FACTORIES = REQUIRES_GRAD_FACTORIES | TENSOR_TYPES | frozenset(
    f"torch.{f}" for f in ("as_tensor", "from_numpy", "randint", "randint_like", "randperm", "range", "multinomial"))
# Factories whose positional arguments are the sizes (their count is the rank), and those whose rank is
# their first argument's (``*_like``).
SIZED_FACTORIES = frozenset(f"torch.{f}" for f in ("randn", "rand", "zeros", "ones", "empty"))
LIKE_FACTORIES = frozenset(f"torch.{f}" for f in (
    "zeros_like", "ones_like", "rand_like", "randn_like", "empty_like", "full_like", "randint_like"))
# dtype names as torch spells them (``torch.long``) -> the canonical name.
DTYPES: Dict[str, str] = {
    "float": "float32", "float32": "float32", "double": "float64", "float64": "float64", "half": "float16",
    "float16": "float16", "bfloat16": "bfloat16", "long": "int64", "int64": "int64", "int": "int32",
    "int32": "int32", "short": "int16", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}
INTEGER_DTYPES = frozenset({"int64", "int32", "int16", "int8", "uint8"})
# Tensor methods that convert to a dtype.
CAST_METHODS: Dict[str, str] = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
    "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool",
}

# -- tensor methods -------------------------------------------------------------------------------------
# Methods whose result never carries a graph, whatever the receiver (the union of what every family knew).
NO_GRAPH_METHODS = frozenset({
    "detach", "new", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "item", "tolist", "numpy",
    "size", "dim", "numel", "nelement", "ndimension", "element_size", "data_ptr", "stride", "get_device",
    "is_contiguous", "argmax", "argmin", "argsort", "eq", "ne", "lt", "le", "gt", "ge", "equal", "isnan",
    "isinf", "logical_not", "nonzero", "all", "any", "long", "int", "short", "char", "byte", "bool"})
COMPARISON_METHODS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "equal"})
BOOLEAN_METHODS = COMPARISON_METHODS | {"isnan", "isinf", "logical_not", "logical_and", "logical_or",
                                        "logical_xor", "isfinite"}
# Methods (and attributes) whose result is plain Python: sizes, counts, flags, lists.
PYTHON_INT_METHODS = frozenset({"dim", "numel", "nelement", "ndimension", "element_size", "get_device",
                                "data_ptr"})
# Tensor methods whose result is not a tensor (numpy arrays, Python values, tuples, None).
NON_TENSOR_RESULTS = PYTHON_INT_METHODS | {"item", "tolist", "numpy", "size", "equal", "backward", "register_hook",
                                           "retain_grad", "topk", "chunk", "split", "unbind", "storage"}
METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "is_cuda", "ndim", "layout", "is_sparse"})
# Methods that return the receiver's values unchanged (moves and casts): rank kept.
MOVE_METHODS = frozenset({"cuda", "cpu", "to", "float", "double", "half", "bfloat16", "type", "type_as"})
# Methods whose result has the receiver's shape.
SAME_SHAPE_METHODS = MOVE_METHODS | frozenset({
    "long", "int", "short", "char", "byte", "bool", "detach", "clone", "contiguous", "pin_memory", "abs", "neg",
    "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "sin", "cos", "floor", "ceil", "round", "sign",
    "clamp", "clamp_min", "clamp_max", "pow", "mul", "div", "add", "sub", "reciprocal", "square", "masked_fill",
    "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "logical_not", "softmax", "log_softmax", "view_as",
    "expand_as", "reshape_as", "type_as", "requires_grad_", "fmod", "remainder", "lerp", "expm1", "log1p",
    "float_power", "erf", "erfinv", "frac", "trunc", "nan_to_num", "cumsum", "cumprod", "flip", "roll",
    "tril", "triu", "zero_", "fill_", "normal_", "uniform_"})
# ``torch.X(t, ...)``/``F.X(t, ...)`` whose result has the shape of ``t`` (beside SAME_SHAPE_METHODS' names).
SAME_SHAPE_FUNCTIONS = frozenset({"relu", "relu6", "softmax", "log_softmax", "softmin", "sigmoid", "tanh", "dropout",
                                  "dropout2d", "leaky_relu", "elu", "selu", "gelu", "silu", "softplus", "normalize",
                                  "hardtanh", "logsigmoid", "mish", "where"})
# Methods whose result is a new tensor with history when the receiver has some.
DERIVING_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "expand", "expand_as", "repeat", "permute", "transpose", "t",
    "squeeze", "unsqueeze", "flatten", "narrow", "select", "index_select", "gather", "masked_select", "clone",
    "sum", "mean", "prod", "std", "var", "norm", "pow", "exp", "log", "sqrt", "abs", "neg", "sigmoid", "tanh",
    "relu", "softmax", "log_softmax", "mm", "matmul", "bmm", "mv", "dot", "mul", "add", "sub", "div", "clamp",
    "flip", "roll", "cumsum", "diag", "tril", "triu", "masked_fill", "lerp", "addmm", "outer", "square",
    "logsumexp", "unfold", "index_add", "scatter", "scatter_add", "repeat_interleave", "tile", "movedim"})
# Methods whose arguments (device, dtype, shape, indices) never bring autograd history in: the result has a
# graph only if the receiver has one.
RECEIVER_HISTORY_METHODS = frozenset({
    "cuda", "cpu", "to", "type", "type_as", "float", "double", "half", "bfloat16", "long", "int", "short",
    "char", "byte", "bool", "view", "view_as", "reshape", "reshape_as", "expand", "expand_as", "unsqueeze",
    "squeeze", "unsqueeze_", "squeeze_", "t", "t_", "transpose", "transpose_", "permute", "contiguous",
    "clone", "narrow", "select", "flatten", "repeat", "chunk", "split", "index_select", "gather",
    "masked_select", "pin_memory", "share_memory_", "resize_", "resize_as_", "zero_", "normal_",
    "uniform_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_"})
# Methods that may return the tensor itself (a leaf may stay a leaf).
IDENTITY_METHODS = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "type_as",
                              "contiguous", "pin_memory"})
# Reductions over every element when called without a dimension; value: the positional arguments that
# still reduce everything (``norm(2)``, ``dist(other, 2)``).
FULL_REDUCTIONS: Dict[str, int] = {"sum": 0, "mean": 0, "prod": 0, "std": 0, "var": 0, "max": 0, "min": 0,
                                   "median": 0, "norm": 1, "dot": 1, "dist": 2, "trace": 0, "all": 0, "any": 0,
                                   "amax": 0, "amin": 0, "logsumexp": 0, "nansum": 0, "nanmean": 0,
                                   "count_nonzero": 0}
# Reductions that take a dimension and drop it (without ``keepdim``).
DIM_REDUCTIONS = frozenset({"sum", "mean", "prod", "std", "var", "norm", "logsumexp", "nansum", "nanmean",
                            "amax", "amin", "all", "any", "argmax", "argmin", "count_nonzero"})
# ``x.max(1)`` and friends return (values, indices); ``[1]`` is the indices (int64, no graph).
INDEX_RESULTS = frozenset({"max", "min", "sort", "topk", "kthvalue", "mode", "median"})
PERMUTING_METHODS = frozenset({"t", "transpose", "permute", "movedim", "swapaxes", "swapdims"})
# In-place methods that change values (``resize_`` is absent: it changes storage, not values).
INPLACE_METHODS = frozenset({
    "copy_", "zero_", "fill_", "uniform_", "normal_", "bernoulli_", "random_", "exponential_", "geometric_",
    "cauchy_", "log_normal_", "add_", "sub_", "mul_", "div_", "addcmul_", "addcdiv_", "clamp_", "clamp_min_",
    "clamp_max_", "clip_", "pow_", "sqrt_", "exp_", "log_", "neg_", "abs_", "sign_", "floor_", "ceil_", "round_",
    "lerp_", "masked_fill_", "index_fill_", "index_add_", "index_copy_", "index_put_", "scatter_", "scatter_add_",
    "renorm_", "sigmoid_", "tanh_", "relu_", "t_", "transpose_", "squeeze_", "unsqueeze_", "fmod_", "remainder_",
    "reciprocal_", "addmm_", "put_", "masked_scatter_", "nan_to_num_", "fill_diagonal_", "square_", "copysign_",
    "trunc_", "frac_", "rsqrt_", "log1p_", "expm1_", "sin_", "cos_", "erfinv_"})
# In-place methods that change shape, storage or flags rather than values.
NOT_VALUE_UPDATES = frozenset({"set_", "resize_", "resize_as_", "t_", "transpose_", "squeeze_", "unsqueeze_",
                               "as_strided_", "requires_grad_", "share_memory_", "detach_", "swapdims_",
                               "swapaxes_", "retain_grad"})
# In-place initialisers: a constructor filled by one of these did not care about its contents.
IN_PLACE_INITIALISERS = frozenset({"zero_", "fill_", "normal_", "uniform_", "random_", "bernoulli_",
                                   "exponential_", "geometric_", "cauchy_", "log_normal_"})
# Attributes and methods only torch tensors have (numpy arrays share ``max``, ``view``, ``size``, ``sum``...).
TENSOR_ONLY = frozenset({"backward", "grad", "grad_fn", "requires_grad", "requires_grad_", "register_hook",
                         "retain_grad", "volatile", "cuda", "cpu", "numpy", "detach", "view_as", "unsqueeze", "dim",
                         "topk", "eq", "ne", "float", "long", "double", "half", "contiguous", "permute", "mm", "bmm",
                         "matmul", "expand", "expand_as", "masked_fill", "masked_fill_", "index_select", "gather",
                         "scatter_", "zero_", "fill_", "normal_", "uniform_", "add_", "mul_", "is_cuda", "new",
                         "type_as", "chunk", "narrow", "t", "norm", "sigmoid", "tanh", "exp", "log", "clamp",
                         "item", "data_ptr", "new_zeros", "new_ones", "new_full"})
# Uses of a tensor that mean its gradient is wanted.
GRAD_READERS = frozenset({"grad", "grad_fn", "requires_grad", "register_hook", "retain_grad",
                          "register_post_accumulate_grad_hook"})

# -- torch functions ----------------------------------------------------------------------------------------
# ``torch.*`` names that are not tensor-valued functions.
NOT_TENSOR_FUNCTIONS = frozenset({"device", "dtype", "no_grad", "enable_grad", "inference_mode", "manual_seed",
                                  "save", "load", "numel", "typename", "Size", "Generator", "set_grad_enabled"})
# Modules whose functions take and return tensors (not ``torch.distributed``, ``torch.jit``, ...).
TENSOR_FUNCTION_MODULES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
                                     "torch.nn.init", "torch.autograd", "torch.autograd.variable"})
# Qualified prefixes whose calls are neither tensor math nor modules.
NOT_MATH = ("torch.autograd", "torch.optim", "torch.func", "torch.utils", "torch.distributed", "torch.jit",
            "torch.save", "torch.load", "torch.nn.utils", "torch.nn.init", "torch.nn.parameter", "torch.nn.Parameter",
            "torch.cuda", "torch.backends", "torch.multiprocessing", "torch.onnx", "torch.hub")
# Libraries whose calls never return torch tensors.
NON_TORCH_LIBRARIES = frozenset({"numpy", "scipy", "pandas", "PIL", "cv2", "skimage", "imageio", "h5py", "json",
                                 "pickle", "os", "sys", "io", "csv", "re", "random", "collections", "itertools",
                                 "argparse", "time", "datetime", "sklearn", "matplotlib", "torchvision",
                                 "requests", "yaml", "torchnet"})
VARIABLE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
AUTOGRAD_CALLS = frozenset({"torch.autograd.backward", "torch.autograd.grad"})

# -- grad mode --------------------------------------------------------------------------------------------
GRAD_OFF = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                      "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
GRAD_OFF_WITH_MODE = frozenset({"torch.inference_mode", "torch.autograd.grad_mode.inference_mode"})  # (mode=False)
GRAD_SWITCH = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                         "torch.autograd.grad_mode.set_grad_enabled"})
GRAD_ON = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})

# -- losses -------------------------------------------------------------------------------------------------
# Every ``torch.nn.functional`` loss: with a reducing ``reduction`` (the default) its result is 0-dim.
LOSS_FUNCTIONS = frozenset({
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy",
    "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss",
    "margin_ranking_loss", "mse_loss", "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
    "nll_loss", "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss"})
REDUCING = frozenset({"mean", "sum", "batchmean"})  # ``reduction=`` values that give one number


def is_loss_class(name: str) -> bool:
    """``torch.nn.<name>`` is a loss module (calling one that reduces gives a 0-dim tensor)."""
    return (name.endswith("Loss") and name != "AdaptiveLogSoftmaxWithLoss") or name == "NLLLoss2d"


# -- modules ------------------------------------------------------------------------------------------------
# torch.nn layers and the attributes that are their parameters.
LAYER_PARAMS = {
    **{name: ("weight", "bias") for name in (
        "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LayerNorm", "GroupNorm")},
    "Embedding": ("weight",), "EmbeddingBag": ("weight",), "PReLU": ("weight",),
    **{name: ("weight_ih", "weight_hh", "bias_ih", "bias_hh") for name in ("RNNCell", "LSTMCell", "GRUCell")},
}
RNN_LAYERS = frozenset({"RNN", "LSTM", "GRU"})  # parameters weight_ih_l0, bias_hh_l1, ...
PARAMETERLESS_MODULES = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softplus",
    "Dropout", "Dropout2d", "Dropout3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Upsample", "Flatten", "Identity", "PixelShuffle"})
# Methods only modules have (a name used with one is a module).
MODULE_METHODS = frozenset({"eval", "train", "parameters", "named_parameters", "modules", "named_modules",
                            "children", "named_children", "forward", "register_forward_hook", "register_buffer"})
# Module methods that return the module itself.
MODULE_SELF_METHODS = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "type"})
# Where module classes live (a class of the file deriving from one is a module).
MODULE_PREFIXES = ("torch.nn.", "torchvision.models.")
# Qualified names under torch.nn that are not module classes.
NOT_MODULES = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.parameter.")
PARAMETER_ITERATORS = frozenset({"parameters", "named_parameters", "param_groups"})
OPTIMIZERS = frozenset({"Adam", "AdamW", "SGD", "RMSprop", "Adagrad", "Adadelta", "Adamax", "ASGD", "LBFGS", "Rprop",
                        "SparseAdam", "NAdam", "RAdam", "LAMB", "Lamb", "FusedAdam", "FusedLAMB", "FusedSGD",
                        "Adafactor", "Lion", "Yogi", "AdaBound", "LARS"})

# Modules with parameters of their own (beside LAYER_PARAMS, whose parameter attributes are known).
PARAMETER_MODULES = frozenset({*LAYER_PARAMS, *RNN_LAYERS, "MultiheadAttention", "Transformer", "TransformerEncoder",
                               "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer"})
# Qualified prefixes of classes that are not ``nn.Module``s (calling an instance does not run a forward).
NOT_MODULE_CLASSES = ("torch.optim", "torch.utils", "torch.distributions", "torch.device", "torch.dtype",
                      "torch.Generator", "torch.Size", "torch.autograd", "torch.nn.Parameter",
                      "torch.nn.parameter", "argparse", "collections", "pathlib", "logging")
# Wrappers whose ``state_dict()`` keys are the wrapped module's with a ``module.`` prefix.
DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                           "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.data_parallel.DataParallel",
                           "torch.nn.parallel.distributed.DistributedDataParallel"})
# Strips a prefix from a state dict's keys in place (torch >= 1.9).
CONSUME_PREFIX = "torch.nn.modules.utils.consume_prefix_in_state_dict_if_present"

# -- autograd -----------------------------------------------------------------------------------------------
DETECT_ANOMALY = frozenset({"torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly"})
SET_DETECT_ANOMALY = frozenset({"torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly"})
# Calls that differentiate with respect to what they are given (inputs, not only parameters).
INPUT_GRADIENTS = ("torch.autograd.grad", "torch.autograd.functional", "torch.func")
# Calls that read or apply gradients of what they are given.
GRAD_CONSUMERS = ("torch.autograd", "torch.optim", "torch.func", "torch.distributed.autograd",
                  "torch.distributed.optim")
# Tensor methods whose result is a tensor without autograd history (a subset of NO_GRAPH_METHODS).
NO_GRAPH_TENSOR_METHODS = frozenset({"detach", "long", "int", "short", "byte", "char", "bool", "argmax", "argmin",
                                     "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "nonzero", "new",
                                     "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})
# Tensor attributes whose value carries no autograd graph (``grad`` does only under ``create_graph=True``).
NO_GRAPH_ATTRIBUTES = frozenset({"data", "grad", "shape", "dtype", "device", "requires_grad", "is_leaf"})
# Tensor methods whose result is plain Python or a new tensor that shares nothing with the receiver's graph.
VALUE_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "data_ptr", "element_size", "nelement",
                           "stride", "is_contiguous", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
                           "new"})

# Modules that apply a function element by element (the output has the input's shape).
ELEMENTWISE_MODULES = frozenset({"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
                                 "Tanh", "Hardtanh", "Hardsigmoid", "LogSigmoid", "Softplus", "Dropout", "Identity"})

# -- losses whose target must have the input's shape ----------------------------------------------------------
# ``nn.X``/``F.x`` that compare input and target element by element: a (N, 1) input with a (N,) target
# broadcast with a warning in 0.3; now BCE raises and the others broadcast to (N, N) (value: True if it raises).
ELEMENTWISE_LOSSES: Dict[str, bool] = {
    "BCELoss": True, "BCEWithLogitsLoss": True, "MSELoss": False, "L1Loss": False, "SmoothL1Loss": False,
    "HuberLoss": False, "binary_cross_entropy": True, "binary_cross_entropy_with_logits": True, "mse_loss": False,
    "l1_loss": False, "smooth_l1_loss": False, "huber_loss": False}

# -- distributions --------------------------------------------------------------------------------------------
# ``torch.distributions.X(params).sample()`` has the batch shape of the parameters less the event dimensions:
# value = how many trailing dimensions of the first parameter the sample drops (Categorical's probs/logits
# hold one row per class: a 1-d ``probs`` gives a 0-dim sample). ``log_prob(sample)`` has the sample's rank
# less the event rank (0 for all of these but the multivariate ones, listed with their event rank).
DISTRIBUTION_SAMPLE_DROPS: Dict[str, int] = {
    "Categorical": 1, "Bernoulli": 0, "Normal": 0, "Beta": 0, "Gamma": 0, "Uniform": 0, "Exponential": 0,
    "Poisson": 0, "Laplace": 0, "Cauchy": 0, "Gumbel": 0, "LogNormal": 0, "Binomial": 0, "Geometric": 0,
    "RelaxedBernoulli": 0, "ContinuousBernoulli": 0, "HalfNormal": 0, "HalfCauchy": 0, "StudentT": 0,
    "VonMises": 0, "Weibull": 0, "Chi2": 0, "Dirichlet": 0, "MultivariateNormal": 0, "OneHotCategorical": 0,
    "RelaxedOneHotCategorical": 0, "Multinomial": 0, "LowRankMultivariateNormal": 0,
}
DISTRIBUTION_EVENT_RANK: Dict[str, int] = {"Dirichlet": 1, "MultivariateNormal": 1, "OneHotCategorical": 1,
                                           "RelaxedOneHotCategorical": 1, "Multinomial": 1,
                                           "LowRankMultivariateNormal": 1}
SAMPLE_METHODS = frozenset({"sample", "rsample"})

# -- ecosystem (TM7xx) -------------------------------------------------------------------------------------
# Device-specific mixed-precision names deprecated in 2.4 -> (the ``torch.amp`` name, its device, the legacy
# call's positional parameters: ``torch.amp.autocast`` takes ``dtype`` second, so they become keywords).
DEVICE_AMP: Dict[str, tuple] = {
    "torch.cuda.amp.autocast": ("torch.amp.autocast", "cuda", ("enabled", "dtype", "cache_enabled")),
    "torch.cpu.amp.autocast": ("torch.amp.autocast", "cpu", ("enabled", "dtype", "cache_enabled")),
    "torch.cuda.amp.GradScaler": ("torch.amp.GradScaler", "cuda", None),  # same order after the device
    "torch.cpu.amp.GradScaler": ("torch.amp.GradScaler", "cpu", None),
    "torch.cuda.amp.custom_fwd": ("torch.amp.custom_fwd", "cuda", ("fwd",)),
    "torch.cuda.amp.custom_bwd": ("torch.amp.custom_bwd", "cuda", ("bwd",)),
}
# ``custom_fwd``/``custom_bwd`` take the device as the keyword ``device_type``; the others positionally.
DEVICE_AMP_KEYWORD = {"torch.amp.custom_fwd": "device_type", "torch.amp.custom_bwd": "device_type"}
# torchvision datasets whose images are single-channel (``ToTensor`` gives 1 x H x W).
SINGLE_CHANNEL_DATASETS = frozenset(f"torchvision.datasets.{d}" for d in (
    "MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST", "USPS"))
# torchvision 0.2.2 renamed the datasets' legacy split attributes (MNIST keeps warning aliases; CIFAR's are gone).
DATASET_ATTRIBUTE_RENAMES: Dict[str, str] = {
    "train_data": "data", "test_data": "data", "train_labels": "targets", "test_labels": "targets"}
RENAMED_ATTRIBUTE_DATASETS = SINGLE_CHANNEL_DATASETS - {"torchvision.datasets.USPS"} | frozenset(
    f"torchvision.datasets.{d}" for d in ("CIFAR10", "CIFAR100"))
# Transforms that keep an image's channel count (what ``Normalize`` after them sees is the dataset's).
CHANNEL_KEEPING_TRANSFORMS = frozenset(f"torchvision.transforms.{t}" for t in (
    "ToTensor", "PILToTensor", "ConvertImageDtype", "Resize", "Scale", "CenterCrop", "RandomCrop", "RandomResizedCrop",
    "RandomSizedCrop", "FiveCrop", "TenCrop", "Pad", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation",
    "RandomAffine", "RandomPerspective", "ElasticTransform", "RandomErasing", "GaussianBlur", "RandomInvert",
    "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize"))
# tensorboardX's ``SummaryWriter`` beyond ``torch.utils.tensorboard``'s: methods, constructor keywords (``logdir``
# is ``log_dir``), and method keywords (checked against tensorboardX 2.6 and torch 2.13).
TENSORBOARDX_ONLY_METHODS = frozenset({"export_scalars_to_json", "add_openvino_graph", "use_metadata", "file_writer",
                                       "all_writers", "scalar_dict"})
TENSORBOARDX_ONLY_KEYWORDS = frozenset({"write_to_disk", "comet_config", "display_name", "summary_description"})
TENSORBOARDX_RENAMED_KEYWORDS = {"logdir": "log_dir"}

# -- behaviour changes after 0.4 (TM5xx) ------------------------------------------------------------------
# Methods whose result keeps the receiver's dtype (an integer tensor stays one).
SAME_DTYPE_METHODS = frozenset({"view", "view_as", "reshape", "squeeze", "unsqueeze", "expand", "expand_as",
                                "repeat", "t", "transpose", "permute", "contiguous", "clone", "cpu", "cuda", "narrow",
                                "flip", "zero_", "fill_", "masked_fill_", "index_fill_", "scatter_"})
# Functions whose result is an int64 tensor whatever their arguments.
INT64_FUNCTIONS = frozenset({"torch.randperm", "torch.multinomial", "torch.nonzero"})
# Mask arguments: method -> its mask's position; ``torch.X`` -> the mask's position (``where``'s is ``condition``).
MASK_METHODS: Dict[str, int] = {"masked_fill": 0, "masked_fill_": 0, "masked_select": 0, "masked_scatter": 0,
                                "masked_scatter_": 0}
MASK_FUNCTIONS: Dict[str, int] = {"torch.masked_fill": 1, "torch.masked_select": 1, "torch.masked_scatter": 1,
                                  "torch.where": 0}
SCHEDULER_PREFIX = "torch.optim.lr_scheduler."
# ``F.grid_sample``/``F.affine_grid``: the position of ``align_corners`` (its default flipped in 1.3).
ALIGN_CORNERS_POSITION: Dict[str, int] = {"torch.nn.functional.grid_sample": 4, "torch.nn.functional.affine_grid": 2}
AUTOGRAD_FUNCTION = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
# What a legacy Function's ``self`` offered that the static ``ctx`` offers under the same name.
FUNCTION_CONTEXT_ATTRIBUTES = frozenset({"save_for_backward", "saved_tensors", "needs_input_grad", "mark_dirty",
                                         "mark_non_differentiable", "set_materialize_grads"})
FUNCTION_CONTEXT_RENAMES: Dict[str, str] = {"saved_variables": "saved_tensors"}  # deprecated: warns on every read
# Layouts (TM511): methods that permute dimensions keep that order through elementwise ops (TensorIterator);
# striding ones (expanded, narrowed) give non-contiguous views whose elementwise results are contiguous.
PERMUTING_ATTRIBUTES = frozenset({"T", "mT"})
STRIDING_METHODS = frozenset({"expand", "expand_as", "narrow", "unfold", "diagonal", "as_strided"})
# The result is the receiver, a view of it, or (a dtype/device conversion) may be: same layout.
LAYOUT_ALIASES = frozenset({"view", "view_as", "reshape", "reshape_as", "flatten", "squeeze", "unsqueeze", "select",
                            "detach", "float", "double", "half", "long", "int", "short", "char", "byte", "bool",
                            "type", "type_as", "to", "cpu", "cuda"})
# Elementwise ops (methods, and ``torch.``/``F.`` functions of the same name): a permuted operand gives a
# permuted result (each checked on the installed torch by the TM511 tests).
ELEMENTWISE = frozenset({"eq", "ne", "gt", "lt", "ge", "le", "add", "sub", "mul", "div", "pow", "remainder", "fmod",
                         "abs", "neg", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "relu", "leaky_relu", "elu",
                         "clamp", "sign", "floor", "ceil", "round", "trunc", "reciprocal", "logical_not", "clone",
                         "sin", "cos", "where"})
# Methods whose result is a new tensor: writes to it cannot reach the receiver.
FRESH_RESULTS = ELEMENTWISE - {"clone"} | frozenset({
    "sum", "mean", "prod", "max", "min", "argmax", "argmin", "norm", "std", "var", "all", "any", "item", "tolist",
    "topk", "sort", "nonzero", "numel", "size", "dim", "equal", "dot", "mm", "matmul", "bmm", "cumsum", "softmax",
    "log_softmax"})
VIEW_RESHAPES: Dict[str, str] = {"view": "reshape", "view_as": "reshape_as"}
DTYPE_NAMES = frozenset({*DTYPES, "complex64", "complex128"})

# -- torchvision and numpy (TM507, TM509, TM512) ------------------------------------------------------------
# Removed transforms -> (current name, legacy positional arguments that are keywords now).
TORCHVISION_RENAMES: Dict[str, tuple] = {
    "torchvision.transforms.Scale": ("Resize", ()),
    "torchvision.transforms.RandomSizedCrop": ("RandomResizedCrop", (None, "interpolation")),
}
# Renamed keywords -> (new name, the torch whose torchvision has it): ``value_range=`` came with torchvision 0.9,
# which pairs with torch 1.8.
TORCHVISION_KEYWORDS: Dict[str, Dict[str, tuple]] = {
    "torchvision.utils.make_grid": {"range": ("value_range", "1.8")},
    "torchvision.utils.save_image": {"range": ("value_range", "1.8")},
}
PRETRAINED_WEIGHTS_TORCH = "1.12"  # the ``*_Weights`` enums came with torchvision 0.13, which pairs with torch 1.12
# Model builders of the legacy era: ``pretrained=True`` means exactly ``weights=<Enum>.IMAGENET1K_V1``
# (torchvision 0.28 ``handle_legacy_interface``).
PRETRAINED_WEIGHTS: Dict[str, str] = {
    "alexnet": "AlexNet_Weights", "vgg11": "VGG11_Weights", "vgg11_bn": "VGG11_BN_Weights",
    "vgg13": "VGG13_Weights", "vgg13_bn": "VGG13_BN_Weights", "vgg16": "VGG16_Weights",
    "vgg16_bn": "VGG16_BN_Weights", "vgg19": "VGG19_Weights", "vgg19_bn": "VGG19_BN_Weights",
    "resnet18": "ResNet18_Weights", "resnet34": "ResNet34_Weights", "resnet50": "ResNet50_Weights",
    "resnet101": "ResNet101_Weights", "resnet152": "ResNet152_Weights",
    "densenet121": "DenseNet121_Weights", "densenet161": "DenseNet161_Weights",
    "densenet169": "DenseNet169_Weights", "densenet201": "DenseNet201_Weights",
    "squeezenet1_0": "SqueezeNet1_0_Weights", "squeezenet1_1": "SqueezeNet1_1_Weights",
    "inception_v3": "Inception_V3_Weights", "googlenet": "GoogLeNet_Weights",
    "mobilenet_v2": "MobileNet_V2_Weights", "shufflenet_v2_x0_5": "ShuffleNet_V2_X0_5_Weights",
    "shufflenet_v2_x1_0": "ShuffleNet_V2_X1_0_Weights", "resnext50_32x4d": "ResNeXt50_32X4D_Weights",
    "resnext101_32x8d": "ResNeXt101_32X8D_Weights", "wide_resnet50_2": "Wide_ResNet50_2_Weights",
    "wide_resnet101_2": "Wide_ResNet101_2_Weights", "mnasnet0_5": "MNASNet0_5_Weights",
    "mnasnet1_0": "MNASNet1_0_Weights",
}
NUMPY_REMOVED_ALIASES: Dict[str, str] = {"numpy.float": "float", "numpy.int": "int", "numpy.object": "object",
                                         "numpy.str": "str", "numpy.complex": "complex", "numpy.unicode": "str"}
# Conversions that take PIL images and numpy arrays only (a tensor raises TypeError), and pipelines of them.
TO_TENSOR = frozenset({"torchvision.transforms.ToTensor"})
TO_TENSOR_FUNCTIONS = frozenset({"torchvision.transforms.functional.to_tensor"})
COMPOSE = frozenset({"torchvision.transforms.Compose"})
