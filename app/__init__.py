"""pitree: a full-screen terminal explorer for Pi coding-agent session files."""

__version__ = "0.1.0"
