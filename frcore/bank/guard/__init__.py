"""The prompt-injection detector behind quarantine.

What the rest of FR-Bank uses of this layer is imported from here; its modules are its own.
"""

from ._injection import (
    Detection as Detection,
    clear_caches as clear_caches,
    detect as detect,
    instruction_rule as instruction_rule,
    looks_like_instruction as looks_like_instruction,
)

__all__ = ["Detection", "clear_caches", "detect", "instruction_rule", "looks_like_instruction"]
