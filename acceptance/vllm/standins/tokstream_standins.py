"""Stand-ins for torch and the GPU-only packages that vLLM imports but its derender path never uses.

vLLM's derender code (``vllm.renderers.online_derenderer``, ``vllm.entrypoints.scale_out.derender``)
is pure Python over a Hugging Face tokenizer, but importing it imports ``vllm``, which imports
torch and, through its configuration modules, several CUDA-only packages. This module installs an
import hook that answers those imports with placeholder modules, so the wheel imports on a machine
without them. A placeholder is enough for what happens at import time: attribute look-ups, class
definitions that subclass a torch class, decorators, type annotations and version checks.

After the imports, ``seal()`` turns every placeholder call into a ``StandInUsedError``, so a
derender code path that really used torch would fail loudly instead of computing with a
placeholder. The acceptance stage and the oracle seal before they run anything.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

#: Top-level packages answered by placeholders: torch and the CUDA/kernel packages vLLM imports.
STANDIN_PACKAGES = frozenset(
    {
        "torch",
        "torchvision",
        "torchaudio",
        "torchcodec",
        "triton",
        "flashinfer",
        "xgrammar",
        "llguidance",
        "outlines_core",
        "numba",
        "cupy",
        "vllm_flash_attn",
        "tilelang",
        "quack",
        "humming",
        "tokenspeed_mla",
        "nvtx",
        "fastsafetensors",
        "instanttensor",
        "cutlass",
        "apache_tvm_ffi",
        "tvm_ffi",
        "PyNvVideoCodec",
        "compressed_tensors",
        "depyf",
    }
)

_INT_BITS = {"long": 64, "int64": 64, "int": 32, "int32": 32, "short": 16, "int16": 16, "int8": 8}


class _IInfo:
    """``torch.iinfo`` for the integer dtypes, which vLLM's protocol models use as field bounds."""

    def __init__(self, dtype: Any) -> None:
        bits = _INT_BITS[getattr(dtype, "__name__", str(dtype))]
        self.bits = bits
        self.min = -(1 << (bits - 1))
        self.max = (1 << (bits - 1)) - 1


#: Module attributes that must be real values rather than placeholders.
_KNOWN: dict[str, dict[str, Any]] = {
    "torch": {"__version__": "2.14.0", "iinfo": _IInfo},
    "torch.version": {
        "__version__": "2.14.0",
        "cuda": None,
        "hip": None,
        "xpu": None,
        "git_version": "",
    },
    "triton": {"__version__": "3.6.0"},
    "numba": {"__version__": "0.65.0"},
    "xgrammar": {"__version__": "0.2.8"},
    "outlines_core": {"__version__": "0.2.14"},
    "llguidance": {"__version__": "1.7.0"},
    "flashinfer": {"__version__": "0.7.2"},
    "compressed_tensors": {"__version__": "0.17.0"},
}

_sealed = False


class StandInUsedError(RuntimeError):
    """A placeholder of a GPU-only package was called after the imports were done."""


class _PlaceholderMeta(type):
    """Placeholder classes: attribute look-ups give more placeholders, calls pass through."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _placeholder(f"{cls.__qualname__}.{name}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if _sealed:
            raise StandInUsedError(f"{cls.__qualname__} called: torch or a GPU package was used")
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]  # used as a decorator
        return _placeholder(f"{cls.__qualname__}()")

    def __getitem__(cls, item: Any) -> Any:
        return cls

    def __bool__(cls) -> bool:
        return False

    def __iter__(cls) -> Any:
        return iter(())

    def __len__(cls) -> int:
        return 0

    def __add__(cls, other: Any) -> Any:
        return cls

    def __radd__(cls, other: Any) -> Any:
        return other


def _placeholder(qualname: str) -> type:
    return _PlaceholderMeta(qualname.rsplit(".", 1)[-1], (), {"__qualname__": qualname})


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        full = f"{self.__name__}.{name}"
        if full in sys.modules:
            return sys.modules[full]
        value = _placeholder(full)
        setattr(self, name, value)
        return value


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _PlaceholderModule(spec.name)
        module.__dict__.update(_KNOWN.get(spec.name, {}))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def _importer() -> str:
    """The module on whose behalf the import system is looking a name up."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith("<frozen importlib") or "/importlib/" in filename):
            return str(frame.f_globals.get("__name__", ""))
        frame = frame.f_back
    return ""


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname.split(".", 1)[0] not in STANDIN_PACKAGES:
            return None
        # Only vLLM (and the placeholders themselves) get placeholders: other packages probe
        # for torch or torchcodec to decide what to use, and must find them absent.
        importer = _importer().split(".", 1)[0]
        if importer != "vllm" and importer not in STANDIN_PACKAGES:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=True)
        spec.submodule_search_locations = []
        return spec


def install() -> None:
    """Answers imports of ``STANDIN_PACKAGES`` with placeholders (idempotent)."""
    # transformers decides once (cached) whether torch is there; let it decide before vLLM's
    # import of torch puts a placeholder in sys.modules, so it takes its torch-free paths.
    from transformers.utils import import_utils

    import_utils.is_torch_available()
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


def seal() -> None:
    """From now on, calling any placeholder raises ``StandInUsedError``."""
    global _sealed
    _sealed = True
