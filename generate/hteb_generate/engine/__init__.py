"""Generation engines: the interface, the backends (registered on import) and the call cache."""

from . import transformers_engine, vllm_engine  # noqa: F401  (register the backends)
from .base import ENGINES, ChatRequest, Conversation, Engine, check_engine_name, create_engine, register_engine
from .cache import CachedEngine, CallCache

__all__ = [
    "ENGINES",
    "CachedEngine",
    "CallCache",
    "ChatRequest",
    "Conversation",
    "Engine",
    "check_engine_name",
    "create_engine",
    "register_engine",
]
