"""Textual widgets of pitree, one per module."""
