"""Package data: the stylesheet, help text and the demo session."""
