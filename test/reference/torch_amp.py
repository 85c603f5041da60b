"""PyTorch's automatic mixed precision, emulated on the CPU for the plain-PyTorch references:
CUDA autocast's op policy in bf16 or fp16, and torch.cuda.amp.GradScaler's dynamic loss
scaling. Written from PyTorch's AMP documentation (torch.amp "Autocast Op Reference", CUDA
ops, and GradScaler's defaults), not from any trainer under test. Needs only torch.

Why an emulation: a person fine-tunes with AMP on a GPU (HF Trainer's --bf16 / --fp16 run
CUDA autocast and GradScaler). torch 1.13's CPU autocast takes only bf16, keeps ops in
bf16 that CUDA autocast runs in fp32 (softmax, layer_norm, pow), and its CPU has no fp16
GEMM. So every value here is an fp32 tensor, and a tensor that autocast would hold in 16
bits is one whose values are rounded to that type (round to nearest even), with the
gradient that reaches it rounded the same way, as autograd keeps a 16-bit tensor's gradient
in its dtype. Arithmetic is fp32 throughout: a 16-bit GEMM or elementwise kernel on a GPU
also computes in fp32 and rounds once when it stores.

The policy, applied to every torch function the forward calls (a TorchFunctionMode):
  1. ops that autocast to 16 bits (matmul, mm, bmm, addmm, baddbmm, linear, ...): their
     float inputs are rounded to 16 bits (autocast's cast of an fp32 weight or activation)
     and their results are 16-bit;
  2. ops that autocast to fp32 (softmax, log_softmax, layer_norm, pow, rsqrt, exp, sum,
     cross_entropy, ...): they read their inputs widened and their results are fp32;
  3. explicit conversions (.float(), .to(dtype), .type(dtype)) give fp32; the model's code
     sees every tensor's dtype as float32, which is what autocast's residual stream,
     norms and masks hold, and a conversion to the 16-bit type would be rounded by the GEMM
     that reads it anyway;
  4. any other op runs in its inputs' type: its result is 16-bit when every float tensor
     it reads is (an fp32 one promotes it to fp32, as type promotion does; 0-dim tensors
     count only when no dimensioned tensor is read), and is then rounded.
In-place ops on 16-bit tensors are not emulated and raise an error.
"""
import torch
from torch.overrides import TorchFunctionMode

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}

# torch.amp's CUDA ops that autocast to float16 / bfloat16 (the name of the torch function,
# method or operator).
LOWER_PRECISION_OPS = frozenset({
    "__matmul__", "__rmatmul__", "matmul", "mm", "bmm", "addmm", "addbmm", "baddbmm", "addmv",
    "addr", "mv", "linear", "chain_matmul", "multi_dot", "prelu", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc",
})
# torch.amp's CUDA ops that autocast to float32.
FLOAT32_OPS = frozenset({
    "__pow__", "__rpow__", "__rdiv__", "__rtruediv__", "pow", "acos", "asin", "cosh", "sinh",
    "tan", "erfinv", "exp", "expm1", "log", "log10", "log1p", "log2", "reciprocal", "rsqrt",
    "softplus", "softmax", "softmin", "log_softmax", "layer_norm", "group_norm", "norm",
    "normalize", "cdist", "pdist", "dist", "cosine_similarity", "cumprod", "cumsum", "prod",
    "sum", "renorm", "cross_entropy", "nll_loss", "binary_cross_entropy_with_logits", "kl_div",
    "l1_loss", "mse_loss", "smooth_l1_loss", "poisson_nll_loss", "cosine_embedding_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "multilabel_margin_loss",
    "multi_margin_loss", "soft_margin_loss", "triplet_margin_loss",
})
CONVERSIONS = frozenset({"float", "to", "type"})


class _Round(torch.autograd.Function):
    """Rounds to a 16-bit type and back to fp32, and the incoming gradient the same way."""

    @staticmethod
    def forward(ctx, tensor, dtype):
        ctx.dtype = dtype
        return tensor.to(dtype).to(torch.float32)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.dtype).to(torch.float32), None


def _tensors(value):
    """The tensors in an argument (itself, or inside lists and tuples)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _is_float(tensor):
    return isinstance(tensor, torch.Tensor) and tensor.is_floating_point()


class Autocast(TorchFunctionMode):
    """CUDA autocast's policy in `dtype` (torch.bfloat16 or torch.float16), emulated; see the
    module docstring. Use as a context manager around the forward and the loss."""

    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def _round(self, tensor):
        rounded = _Round.apply(tensor, self.dtype)
        rounded.amp_lower_precision = True
        return rounded

    @staticmethod
    def _is_lower(tensor):
        return getattr(tensor, "amp_lower_precision", False)

    def _round_result(self, result):
        if _is_float(result):
            return self._round(result)
        if isinstance(result, (list, tuple)) and all(_is_float(t) for t in result):
            return type(result)(self._round(t) for t in result)
        return result

    def _reads_only_lower(self, args, kwargs):
        """Rule 4: whether the op's result has autocast's 16-bit type."""
        floats = [t for t in _tensors(list(args) + list(kwargs.values())) if t.is_floating_point()]
        dimensioned = [t for t in floats if t.dim() > 0]
        considered = dimensioned or floats
        return bool(considered) and all(self._is_lower(t) for t in considered)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in LOWER_PRECISION_OPS:
            def cast(value):
                if _is_float(value):
                    return value if self._is_lower(value) else self._round(value)
                if isinstance(value, (list, tuple)):
                    return type(value)(cast(item) for item in value)
                return value
            args = tuple(cast(a) for a in args)
            kwargs = {k: cast(v) for k, v in kwargs.items()}
            return self._round_result(func(*args, **kwargs))
        if name in FLOAT32_OPS or name in CONVERSIONS:
            targets = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.dtype)]
            if name in CONVERSIONS and any(t in DTYPES.values() for t in targets):
                raise TypeError(f"{name}: a conversion to a 16-bit type is not emulated")
            return func(*args, **kwargs)
        lower = self._reads_only_lower(args, kwargs)
        if lower and name.endswith("_") and not name.endswith("__"):
            raise TypeError(f"{name}: in-place ops on 16-bit tensors are not emulated")
        result = func(*args, **kwargs)
        return self._round_result(result) if lower else result


class GradScaler:
    """torch.cuda.amp.GradScaler with its defaults (init_scale 2**16, growth_factor 2,
    backoff_factor 0.5, growth_interval 2000): the loss is multiplied by the scale before
    backward; unscale_ multiplies every gradient by the scale's fp32 reciprocal and notes
    whether any is inf or NaN; step runs the optimizer only when none is; update halves the
    scale after a skipped step, and doubles it after growth_interval steps in a row that
    ran."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
        self.scale_value = init_scale
        self.growth_factor, self.backoff_factor = growth_factor, backoff_factor
        self.growth_interval = growth_interval
        self.growth_tracker = 0
        self.found_inf = None

    def scale(self, loss):
        return loss * torch.tensor(self.scale_value, dtype=torch.float32)

    def unscale_(self, optimizer):
        inverse = torch.tensor(self.scale_value, dtype=torch.float64).reciprocal().float()
        found_inf = False
        with torch.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is not None:
                        param.grad.mul_(inverse)
                        found_inf |= not bool(torch.isfinite(param.grad).all())
        self.found_inf = found_inf

    def step(self, optimizer):
        """Runs optimizer.step() unless the gradients overflowed; returns whether it ran."""
        if self.found_inf is None:
            self.unscale_(optimizer)
        ran = not self.found_inf
        if ran:
            optimizer.step()
        return ran

    def update(self):
        if self.found_inf:
            self.scale_value *= self.backoff_factor
            self.growth_tracker = 0
        else:
            self.growth_tracker += 1
            if self.growth_tracker == self.growth_interval:
                self.scale_value *= self.growth_factor
                self.growth_tracker = 0
        self.found_inf = None
