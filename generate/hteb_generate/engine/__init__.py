"""Generation engines: the interface, the backend registry (backends load on first lookup) and the call cache."""

from hteb_generate.engine.base import (
    ENGINES,
    ChatRequest,
    ChatResult,
    Conversation,
    Engine,
    check_engine_options,
    create_engine,
)
from hteb_generate.engine.cache import CachedEngine, CallCache, Engines

__all__ = [
    "ENGINES",
    "CachedEngine",
    "CallCache",
    "ChatRequest",
    "ChatResult",
    "Conversation",
    "Engine",
    "Engines",
    "check_engine_options",
    "create_engine",
]
