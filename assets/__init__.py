"""pitree package."""
